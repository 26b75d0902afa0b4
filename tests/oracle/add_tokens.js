// Adds tokens to a tokenizer.json as transformers' add_tokens does (HF tokenizers' own
// AddedVocabulary assigns the ids) and saves it.
// usage: node add_tokens.js IN.json OUT.json TOKENS.json
// TOKENS.json: [{"content", "special", "single_word", "lstrip", "rstrip", "normalized"}, ...]
// (missing flags: false; "normalized" missing: !special, as HF's AddedToken has it).
const fs = require('fs');
const { Tokenizer, AddedToken } = require(process.env.HF_TOKENIZERS || 'tokenizers');

const [inPath, outPath, tokensPath] = process.argv.slice(2);
const tok = Tokenizer.fromFile(inPath);
const specs = JSON.parse(fs.readFileSync(tokensPath, 'utf8'));
for (const t of specs) {
  const options = {
    singleWord: !!t.single_word,
    leftStrip: !!t.lstrip,
    rightStrip: !!t.rstrip,
    normalized: t.normalized === undefined ? !t.special : !!t.normalized,
  };
  tok.addAddedTokens([new AddedToken(t.content, !!t.special, options)]);
}
tok.save(outPath, true);
