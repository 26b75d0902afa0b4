// Reference encodings from HuggingFace tokenizers (official node binding, Rust core).
// usage: node hf_encode.js TOKENIZER.json IN.txt OUT.jsonl [--special] [--offsets] [--pairs]
//          [--truncate N longest_first|only_first|only_second] [--decode] [--records]
// One JSON line per input line ('\n'-separated, or U+001E with --records; a final separator ends
// the last line):
//   default     [ids...]
//   --offsets   {"ids": [...], "offsets": [[start, end], ...]}   offsets in code points
//   --pairs     lines are "first<TAB>second"; {"ids", "type_ids", "offsets"} of the pair
//   --decode    {"ids": [...], "text": decode(ids, false), "text_skip": decode(ids, true)}
//   --tokens    {"ids": [...], "tokens": [token strings], "text": decode(ids, false)}
//   --full      {"ids", "offsets", "special_ids", "special_type_ids", "text", "text_skip"}: ids and
//               offsets without special tokens, ids with them, decode(ids) and
//               decode(special_ids, skip_special_tokens=true)
const fs = require('fs');
const { Tokenizer } = require(process.env.HF_TOKENIZERS || 'tokenizers');

(async () => {
  const args = process.argv.slice(2);
  const [tokPath, inPath, outPath] = args;
  const has = (f) => args.includes(f);
  const tok = Tokenizer.fromFile(tokPath);
  const t = args.indexOf('--truncate');
  const strategies = { longest_first: 'LongestFirst', only_first: 'OnlyFirst', only_second: 'OnlySecond' };
  if (t >= 0) tok.setTruncation(Number(args[t + 1]), { strategy: strategies[args[t + 2]] });
  const special = has('--special');
  // --records: records end with U+001E (ASCII record separator) instead of a newline, so that a
  // record can be a document that holds newlines.
  const separator = has('--records') ? '\x1e' : '\n';
  let text = fs.readFileSync(inPath, 'utf8');
  if (text.endsWith(separator)) text = text.slice(0, -1);
  const lines = text.split(separator);
  const out = [];
  for (let i = 0; i < lines.length; i += 500) {
    const batch = lines.slice(i, i + 500);
    if (has('--pairs')) {
      for (const l of batch) {
        const k = l.indexOf('\t');
        const e = await tok.encode(l.slice(0, k), l.slice(k + 1), { addSpecialTokens: special });
        out.push(JSON.stringify({ ids: Array.from(e.getIds()), type_ids: Array.from(e.getTypeIds()), offsets: e.getOffsets() }));
      }
      continue;
    }
    const encs = await tok.encodeBatch(batch, { addSpecialTokens: special });
    if (has('--full')) {
      const withSpecial = await tok.encodeBatch(batch, { addSpecialTokens: true });
      for (let k = 0; k < encs.length; k++) {
        const ids = Array.from(encs[k].getIds());
        const sids = Array.from(withSpecial[k].getIds());
        out.push(JSON.stringify({
          ids, offsets: encs[k].getOffsets(), special_ids: sids,
          special_type_ids: Array.from(withSpecial[k].getTypeIds()),
          text: await tok.decode(ids, false), text_skip: await tok.decode(sids, true),
        }));
      }
      continue;
    }
    for (const e of encs) {
      const ids = Array.from(e.getIds());
      if (has('--tokens')) {
        out.push(JSON.stringify({ ids, tokens: e.getTokens(), text: await tok.decode(ids, false) }));
      } else if (has('--offsets')) {
        out.push(JSON.stringify({ ids, offsets: e.getOffsets() }));
      } else if (has('--decode')) {
        out.push(JSON.stringify({ ids, text: await tok.decode(ids, false), text_skip: await tok.decode(ids, true) }));
      } else {
        out.push(JSON.stringify(ids));
      }
    }
  }
  fs.writeFileSync(outPath, out.join('\n') + '\n');
})().catch((err) => { console.error(err); process.exit(1); });
