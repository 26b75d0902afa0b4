// WordPiece vocab.txt: one token per line, with BERT's specials and template.
#include "tokenizer/readers.h"
#include "tokenizer/wordpiece.h"

namespace shardkit::tok {

std::unique_ptr<Tokenizer> load_vocab_txt(const std::string& content, const std::string& source,
                                          const Tokenizer::LoadOptions& options,
                                          uint64_t fingerprint) {
  WordPieceConfig c;
  size_t pos = 0;
  while (pos < content.size()) {
    size_t nl = content.find('\n', pos);
    if (nl == std::string::npos) nl = content.size();
    std::string_view line(content.data() + pos, nl - pos);
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t'))
      line.remove_suffix(1);
    c.vocab.emplace_back(line);
    pos = nl + 1;
  }
  c.normalizer.lowercase = options.lowercase;
  c.normalizer.strip_accents = options.strip_accents.value_or(options.lowercase);
  auto t = std::make_unique<WordPieceTokenizer>(std::move(c), source);
  std::optional<uint32_t> unk = t->unk_id();
  // As HF's BertWordPieceTokenizer: the BERT specials are added tokens, [CLS] A [SEP] (B [SEP]).
  std::vector<AddedToken> added;
  for (const char* name : {"[UNK]", "[SEP]", "[CLS]", "[PAD]", "[MASK]"})
    if (auto id = t->token_to_id(name)) added.push_back(AddedToken{name, *id, true, false, false});
  auto cls = t->token_to_id("[CLS]"), sep = t->token_to_id("[SEP]");
  t->set_added_tokens(std::move(added));
  if (cls && sep) {
    PostProcessorConfig pc;
    set_bert_template(pc, *cls, *sep);
    t->set_post_processor(std::move(pc));
  }
  t->set_fingerprint(fingerprint, "wordpiece");
  t->resolve_special_tokens(unk);
  return t;
}

}  // namespace shardkit::tok
