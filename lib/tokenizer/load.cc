// Tokenizer::from_file: content-based dispatch between a SentencePiece .model, HF tokenizer.json,
// GPT-2 encoder.json (+ vocab.bpe) and WordPiece vocab.txt.
#include "core/checksum.h"
#include "tokenizer/readers.h"

namespace shardkit::tok {

namespace {

// A serialized ModelProto starts with field 1 (pieces, length-delimited): tag byte 0x0A.
// Text files (vocab.txt) never start with a newline byte followed by a piece record, and a
// vocab.txt's first line is a token.
bool looks_like_sentencepiece(const std::filesystem::path& path, const std::string& content) {
  if (path.extension() == ".model") return true;
  return !content.empty() && content[0] == '\x0A' && content.find('\0') != std::string::npos;
}

}  // namespace

std::unique_ptr<Tokenizer> Tokenizer::from_file(const std::filesystem::path& path,
                                                const LoadOptions& options) {
  const std::string source = path.string();
  std::string content = read_all(path);
  if (looks_like_sentencepiece(path, content))
    return load_sentencepiece(content, source, xxh3_64(content.data(), content.size()));
  size_t p = content.find_first_not_of(" \t\r\n\xEF\xBB\xBF");
  if (p != std::string::npos && content[p] == '{') {
    Json j(source);
    simdjson::dom::parser parser;
    element root;
    simdjson::padded_string copy;
    if (auto err = parser.parse(padded(content, copy)).get(root))
      j.fail(std::string("not valid JSON: ") + simdjson::error_message(err));
    object o = j.obj(root, "the document");
    // A tokenizer.json has a "model" object; an encoder.json maps tokens (even "model") to ids.
    element model;
    if (!o.at_key("model").get(model) && model.type() == element_type::OBJECT) {
      auto tokenizer = load_tokenizer_json(j, o, xxh3_64(content.data(), content.size()));
      if (auto* base = dynamic_cast<TokenizerBase*>(tokenizer.get()))
        apply_tokenizer_config(*base, path.parent_path() / "tokenizer_config.json");
      return tokenizer;
    }
    // Merges: --merges, else vocab.bpe or merges.txt beside it, else NAME-vocab.bpe for a
    // NAME-encoder.json.
    std::filesystem::path merges;
    if (options.merges_path) {
      merges = *options.merges_path;
    } else {
      std::vector<std::filesystem::path> candidates = {path.parent_path() / "vocab.bpe",
                                                       path.parent_path() / "merges.txt"};
      std::string stem = path.filename().string();
      if (size_t k = stem.rfind("encoder.json"); k != std::string::npos && k > 0)
        candidates.push_back(path.parent_path() / (stem.substr(0, k) + "vocab.bpe"));
      for (const auto& c : candidates)
        if (merges.empty() && std::filesystem::exists(c)) merges = c;
      if (merges.empty())
        throw Error(ErrorCode::kIo, source,
                    "GPT-2 encoder.json needs its merges: no vocab.bpe or merges.txt beside it "
                    "(name it with --merges)");
    }
    std::string merges_content = read_all(merges);
    std::string both = content + '\0' + merges_content;
    return load_gpt2(j, root, merges, xxh3_64(both.data(), both.size()));
  }
  std::string keyed = content + '\0' + (options.lowercase ? "lower" : "cased") + '\0' +
                      (options.strip_accents.value_or(options.lowercase) ? "strip" : "keep");
  return load_vocab_txt(content, source, options, xxh3_64(keyed.data(), keyed.size()));
}

}  // namespace shardkit::tok
