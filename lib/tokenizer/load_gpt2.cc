// GPT-2 encoder.json + vocab.bpe: byte-level BPE with GPT-2's pattern and <|endoftext|>.
#include "tokenizer/readers.h"

namespace shardkit::tok {

std::unique_ptr<Tokenizer> load_gpt2(const Json& j, element root,
                                     const std::filesystem::path& merges_path,
                                     uint64_t fingerprint) {
  BpeConfig c;
  c.vocab = vocab_by_id(j, root, "encoder.json");
  std::string merges = read_all(merges_path);
  std::istringstream in(merges);
  std::string line;
  size_t lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.rfind("#version", 0) == 0 || line.empty()) continue;
    size_t sp = line.find(' ');
    if (sp == std::string::npos || line.find(' ', sp + 1) != std::string::npos)
      throw Error(ErrorCode::kInput, merges_path.string() + ":" + std::to_string(lineno),
                  "expected two tokens separated by one space");
    c.merges.emplace_back(line.substr(0, sp), line.substr(sp + 1));
  }
  PreTokenizerStep step;
  step.kind = PreTokenizerStep::kByteLevel;
  step.add_prefix_space = false;
  step.use_regex = true;
  c.steps.push_back(std::move(step));
  auto t = std::make_unique<BpeTokenizer>(std::move(c), j.source());
  std::vector<AddedToken> added;
  if (auto id = t->token_to_id("<|endoftext|>"))
    added.push_back(AddedToken{"<|endoftext|>", *id, true, false, false});
  t->set_added_tokens(std::move(added));
  t->set_fingerprint(fingerprint, "bpe");
  t->resolve_special_tokens(std::nullopt);
  return t;
}

}  // namespace shardkit::tok
