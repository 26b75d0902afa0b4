// Single-thread throughput of HuggingFace tokenizers (Rust core via napi, encodeBatch with
// TOKENIZERS_PARALLELISM=false) and of tiktoken (WASM) on the same lines as bench_tokenizer.
// usage: TOKENIZERS_PARALLELISM=false node bench_hf.js TEXT.txt REPEATS (hf TOKENIZER.json | tiktoken ENCODING)...
// Prints one line per tokenizer: "<name> <MB per CPU second> <MB per wall second> <tokens>"
// (best of REPEATS; CPU time of the whole process, the Rust worker thread included).
const fs = require('fs');
const path = require('path');

(async () => {
  const [textPath, repeatsArg, ...specs] = process.argv.slice(2);
  let text = fs.readFileSync(textPath, 'utf8');
  if (text.endsWith('\n')) text = text.slice(0, -1);
  const lines = text.split('\n');
  const bytes = Buffer.byteLength(text, 'utf8') - (lines.length - 1);  // without newlines
  const repeats = Number(repeatsArg);
  for (let i = 0; i < specs.length; i += 2) {
    const kind = specs[i], arg = specs[i + 1];
    let run, name;
    if (kind === 'hf') {
      const { Tokenizer } = require('tokenizers');
      const tok = Tokenizer.fromFile(arg);
      name = 'hf:' + path.basename(path.dirname(arg)) + '/' + path.basename(arg);
      run = async () => {
        let n = 0;
        for (let k = 0; k < lines.length; k += 2000) {
          const encs = await tok.encodeBatch(lines.slice(k, k + 2000), { addSpecialTokens: false });
          for (const e of encs) n += e.getLength();
        }
        return n;
      };
    } else if (kind === 'tiktoken') {
      const { get_encoding } = require('tiktoken');
      const enc = get_encoding(arg);
      name = 'tiktoken:' + arg;
      run = async () => {
        let n = 0;
        for (const l of lines) n += enc.encode_ordinary(l).length;
        return n;
      };
    } else {
      throw new Error('unknown kind ' + kind);
    }
    await run();  // warm up
    let best = Infinity, bestWall = Infinity, tokens = 0;
    for (let r = 0; r < repeats; r++) {
      const t0 = process.hrtime.bigint();
      const c0 = process.cpuUsage();
      tokens = await run();
      const c = process.cpuUsage(c0);
      const s = Number(process.hrtime.bigint() - t0) / 1e9;
      best = Math.min(best, (c.user + c.system) / 1e6);
      bestWall = Math.min(bestWall, s);
    }
    console.log(`${name} ${(bytes / 1e6 / best).toFixed(3)} ${(bytes / 1e6 / bestWall).toFixed(3)} ${tokens}`);
  }
})().catch((err) => { console.error(err); process.exit(1); });
