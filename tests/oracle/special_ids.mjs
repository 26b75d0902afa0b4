// Prints the special token ids transformers.js gives a tokenizer directory (tokenizer.json and
// tokenizer_config.json), as JSON: {"bos": id|null, "eos": ..., "pad": ...}.
// usage: node special_ids.mjs DIR
import fs from 'node:fs';
import { env, PreTrainedTokenizer } from '@huggingface/transformers';

env.allowRemoteModels = false;
env.allowLocalModels = false;

const [dir] = process.argv.slice(2);
const tok = new PreTrainedTokenizer(JSON.parse(fs.readFileSync(`${dir}/tokenizer.json`, 'utf8')),
  JSON.parse(fs.readFileSync(`${dir}/tokenizer_config.json`, 'utf8')));
const id = (v) => (v === undefined || v === null ? null : v);
process.stdout.write(JSON.stringify({
  bos: id(tok.bos_token_id), eos: id(tok.eos_token_id), pad: id(tok.pad_token_id),
}) + '\n');
