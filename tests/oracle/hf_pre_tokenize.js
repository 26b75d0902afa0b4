// The pre-tokenizer of a tokenizer.json alone (HuggingFace tokenizers' pre_tokenize_str), per line.
// usage: node hf_pre_tokenize.js TOKENIZER.json IN.txt OUT.jsonl
// One JSON line per input line ('\n'-separated; a final newline ends the last line):
//   [[piece, [start, end]], ...]   offsets in code points of the line
const fs = require('fs');
const { Tokenizer } = require(process.env.HF_TOKENIZERS || 'tokenizers');

const [tokPath, inPath, outPath] = process.argv.slice(2);
const pre = Tokenizer.fromFile(tokPath).getPreTokenizer();
if (!pre) {
  console.error(`${tokPath} has no pre_tokenizer`);
  process.exit(1);
}
let text = fs.readFileSync(inPath, 'utf8');
if (text.endsWith('\n')) text = text.slice(0, -1);
const out = text.split('\n').map((l) => JSON.stringify(pre.preTokenizeString(l)));
fs.writeFileSync(outPath, out.join('\n') + '\n');
