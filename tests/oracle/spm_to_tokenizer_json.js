// Writes a SentencePiece model (as dumped by spm_dump.py) as tokenizer.json through the HF
// binding's own constructors, the way HF's SpmConverter does: Precompiled charsmap normalizer,
// Metaspace pre-tokenizer and decoder, and a Unigram model or a BPE model whose merges are
// every split of a piece into two pieces, by descending score (SentencePieceExtractor).
// usage: node spm_to_tokenizer_json.js DUMP.json OUT.json
// Models must be trained with --remove_extra_whitespaces=false: the binding's replace() takes
// literal patterns only, so SpmConverter's Replace(Regex(" {2,}")) cannot be built here.
const fs = require('fs');
const t = require(process.env.HF_TOKENIZERS || 'tokenizers');

const [dumpPath, outPath] = process.argv.slice(2);
const d = JSON.parse(fs.readFileSync(dumpPath, 'utf8'));
if (d.normalizer.remove_extra_whitespaces) throw new Error('train with --remove_extra_whitespaces=false');
let model;
if (d.model_type === 'UNIGRAM') {
  model = t.Unigram.init(d.pieces.map((p) => [p[0], p[1]]), { unkId: d.unk_id, byteFallback: d.byte_fallback });
} else if (d.model_type === 'BPE') {
  const vocab = {};
  d.pieces.forEach((p, id) => { vocab[p[0]] = id; });
  let merges = [];
  d.pieces.forEach((p) => {
    const piece = p[0];
    const chars = Array.from(piece);
    const local = [];
    for (let i = 1; i < chars.length; i++) {
      const l = chars.slice(0, i).join(''), r = chars.slice(i).join('');
      if (l in vocab && r in vocab) local.push([l, r, p[1]]);
    }
    local.sort((a, b) => vocab[a[0]] - vocab[b[0]] || vocab[a[1]] - vocab[b[1]]);
    merges.push(...local);
  });
  merges = merges.map((m, i) => [m, i]).sort((a, b) => b[0][2] - a[0][2] || a[1] - b[1]).map((x) => [x[0][0], x[0][1]]);
  model = t.BPE.init(vocab, merges, { unkToken: d.pieces[d.unk_id][0], fuseUnk: true, byteFallback: d.byte_fallback });
} else {
  throw new Error('unsupported model type ' + d.model_type);
}
const tok = new t.Tokenizer(model);
const charsmap = Array.from(Buffer.from(d.normalizer.precompiled_charsmap, 'base64'));
if (charsmap.length) tok.setNormalizer(t.precompiled(charsmap));
const scheme = d.normalizer.add_dummy_prefix ? 'always' : 'never';
tok.setPreTokenizer(t.metaspacePreTokenizer('\u2581', scheme, true));
const decoders = [t.metaspaceDecoder('\u2581', scheme, true)];
if (d.byte_fallback) decoders.unshift(t.byteFallbackDecoder());
tok.setDecoder(d.byte_fallback ? t.sequenceDecoder([t.byteFallbackDecoder(), t.metaspaceDecoder('\u2581', scheme, true)]) : decoders[0]);
const specials = d.pieces.map((p, id) => [p, id]).filter(([p]) => p[2] === 'CONTROL' || p[2] === 'UNKNOWN' || p[2] === 'USER_DEFINED');
tok.addSpecialTokens(specials.filter(([p]) => p[2] !== 'USER_DEFINED').map(([p]) => p[0]));
tok.save(outPath);
