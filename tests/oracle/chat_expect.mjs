// The SFT oracle: transformers.js (@huggingface/transformers, its own Jinja and tokenizers) with
// remote models off, loading a local tokenizer.json + tokenizer_config.json.
//   node chat_expect.mjs DIR FIXTURE.jsonl MODE[,MODE...] > expected.jsonl
// MODE: assistant|last|all|prompt_response. Each output line: {"mode": MODE, "ids": [...],
// "mask": [0/1 ...]} for one fixture line and mode, the modes of a line one after another.
// Messages: ids are apply_chat_template(messages, tokenize) ids. The mask of assistant turn i is
// computed on ids alone, independently of shardkit's character spans: it starts at the first
// token where the conversation's ids depart from apply_chat_template(messages[:i],
// add_generation_prompt) and ends with the first special added token (tokenizer.json
// "special": true) at or after that start, the end-of-turn token.
// prompt_response: encode(prompt) with the tokenizer's special tokens, encode(response) without,
// then the id of tokenizer_config.json's eos_token; the mask covers the response and eos.
import fs from 'node:fs';
import { env, PreTrainedTokenizer } from '@huggingface/transformers';

env.allowRemoteModels = false;
env.allowLocalModels = false;

const [dir, fixture, modeList] = process.argv.slice(2);
const modes = modeList.split(',');
const tokenizerJson = JSON.parse(fs.readFileSync(`${dir}/tokenizer.json`, 'utf8'));
const config = JSON.parse(fs.readFileSync(`${dir}/tokenizer_config.json`, 'utf8'));
const tok = new PreTrainedTokenizer(tokenizerJson, config);
const special = new Set(tokenizerJson.added_tokens.filter((t) => t.special).map((t) => t.id));

const chatIds = (messages, addGenerationPrompt) =>
  Array.from(tok.apply_chat_template(messages, {
    tokenize: true, return_tensor: false, return_dict: false,
    add_generation_prompt: addGenerationPrompt,
  }));

function conversation(messages, mode) {
  const ids = chatIds(messages, false);
  const mask = new Array(ids.length).fill(mode === 'all' ? 1 : 0);
  let turns = messages.map((m, i) => (m.role === 'assistant' ? i : -1)).filter((i) => i >= 0);
  if (mode === 'last') turns = turns.slice(-1);
  if (mode !== 'all') {
    for (const i of turns) {
      const prefix = chatIds(messages.slice(0, i), true);
      let start = 0;
      while (start < prefix.length && start < ids.length && prefix[start] === ids[start]) ++start;
      let end = start;
      while (end < ids.length && !special.has(ids[end])) ++end;
      if (end === ids.length) throw new Error(`no end-of-turn token after assistant turn ${i}`);
      for (let k = start; k <= end; ++k) mask[k] = 1;
    }
  }
  return { ids, mask };
}

function promptResponse(row) {
  const eos = tok.convert_tokens_to_ids(config.eos_token?.content ?? config.eos_token);
  const prompt = Array.from(tok.encode(row.prompt));
  const response = Array.from(tok.encode(row.response, { add_special_tokens: false }));
  const ids = [...prompt, ...response, eos];
  return { ids, mask: ids.map((_, k) => (k < prompt.length ? 0 : 1)) };
}

const out = [];
for (const line of fs.readFileSync(fixture, 'utf8').split('\n')) {
  if (!line.trim()) continue;
  const row = JSON.parse(line);
  const messages = row.messages ??
    [{ role: "user", content: row.prompt }, { role: "assistant", content: row.response }];
  for (const mode of modes) {
    const expected = mode === "prompt_response" ? promptResponse(row) : conversation(messages, mode);
    out.push(JSON.stringify({ mode, ...expected }));
  }
}
process.stdout.write(out.join('\n') + '\n');
