// Expected token sequences for shardify's tests, from HuggingFace tokenizers (npm, Rust core).
// usage: node hf_expect.js REQUEST.json OUT.json
// REQUEST: {"tokenizer": PATH, "mode": "plain"|"single"|"pair"|"qa", "max_len": N, "stride": S,
//           "items": [{"text": ..., "pair": ...} | {"question": ..., "context": ...}]}
//   plain  ids without special tokens (no truncation)
//   single ids with special tokens, truncated to max_len
//   pair   ids and type_ids of (text, pair) with special tokens, longest_first to max_len
//   qa     question ids (leading whitespace stripped, as run_qa does) and context ids with the
//          context's offsets in code points, both without special tokens. The windows are built
//          by the test from these: this binding's getOverflowing() returns too few windows.
// OUT: {"cls", "sep", "pad", "eot", "eos": id, "results": [one per item]}: ids of [CLS], [SEP],
// [PAD] and <|endoftext|>, absent for tokenizers without them, and of the eos_token of a
// tokenizer_config.json beside the tokenizer (as transformers reads it).
const fs = require('fs');
const path = require('path');
const { Tokenizer } = require(process.env.HF_TOKENIZERS ||
  path.join(__dirname, '..', 'oracle', 'node_modules', 'tokenizers'));

(async () => {
  const req = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
  const tok = Tokenizer.fromFile(req.tokenizer);
  const out = [];
  if (req.mode === 'pair') tok.setTruncation(req.max_len, { strategy: 'LongestFirst' });
  if (req.mode === 'single') tok.setTruncation(req.max_len);
  for (const item of req.items) {
    if (req.mode === 'plain') {
      out.push(Array.from((await tok.encode(item.text, null, { addSpecialTokens: false })).getIds()));
    } else if (req.mode === 'single') {
      out.push(Array.from((await tok.encode(item.text, null, { addSpecialTokens: true })).getIds()));
    } else if (req.mode === 'pair') {
      const e = await tok.encode(item.text, item.pair, { addSpecialTokens: true });
      out.push({ ids: Array.from(e.getIds()), type_ids: Array.from(e.getTypeIds()) });
    } else if (req.mode === 'qa') {
      const q = await tok.encode(item.question.replace(/^\s+/, ''), null, { addSpecialTokens: false });
      const c = await tok.encode(item.context, null, { addSpecialTokens: false });
      out.push({ question: Array.from(q.getIds()), context: Array.from(c.getIds()), offsets: c.getOffsets() });
    } else {
      throw new Error('unknown mode ' + req.mode);
    }
  }
  let eos;
  const config = path.join(path.dirname(req.tokenizer), 'tokenizer_config.json');
  if (fs.existsSync(config)) {
    let e = JSON.parse(fs.readFileSync(config, 'utf8')).eos_token;
    if (e && typeof e === 'object') e = e.content;
    if (typeof e === 'string') eos = tok.tokenToId(e);
  }
  fs.writeFileSync(process.argv[3], JSON.stringify({
    cls: tok.tokenToId('[CLS]'),
    sep: tok.tokenToId('[SEP]'),
    pad: tok.tokenToId('[PAD]'),
    eot: tok.tokenToId('<|endoftext|>'),
    eos,
    results: out,
  }));
})().catch((e) => {
  console.error(e);
  process.exit(1);
});
