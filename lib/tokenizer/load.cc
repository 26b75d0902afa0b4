// Tokenizer::from_file: content-based dispatch between a SentencePiece .model, HF tokenizer.json,
// GPT-2 encoder.json (+ vocab.bpe) and WordPiece vocab.txt.
#include <xxhash.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/checksum.h"
#include "core/file_extension.h"
#include "tokenizer/compiled_cache.h"
#include "tokenizer/readers.h"
#include "tokenizer/tokenizer_base.h"

namespace shardkit::tok {

namespace {

// A serialized ModelProto starts with field 1 (pieces, length-delimited): tag byte 0x0A.
// Text files (vocab.txt) never start with a newline byte followed by a piece record, and a
// vocab.txt's first line is a token.
bool looks_like_sentencepiece(const std::filesystem::path& path, const std::string& content) {
  if (path.extension() == ".model") return true;
  return !content.empty() && content[0] == '\x0A' && content.find('\0') != std::string::npos;
}

// The tokenizer.json as its compiled form keeps it: every key as it is, but the model's vocab
// and merges, which the form's tables replace.
std::string skeleton_of(object root) {
  std::string out = "{";
  auto key = [&](std::string_view k) {
    if (out.size() > 1 && out.back() != '{') out += ',';
    out += nlohmann::json(std::string(k)).dump();
    out += ':';
  };
  for (auto [k, v] : root) {
    key(k);
    object model;
    if (k != "model" || v.get(model)) {
      out += simdjson::to_string(v);
      continue;
    }
    out += '{';
    for (auto [mk, mv] : model) {
      key(mk);
      out += mk == "vocab"    ? (mv.is_array() ? "[]" : "{}")
             : mk == "merges" ? std::string("[]")
                              : std::string(simdjson::to_string(mv));
    }
    out += '}';
  }
  return out + "}";
}

// The tokenizer from its compiled form; null when anything in it fails to load.
std::unique_ptr<Tokenizer> load_compiled(const CompiledForm& form, const std::string& source,
                                         uint64_t fingerprint) {
  Json j(source);
  simdjson::dom::parser parser;
  element root;
  simdjson::padded_string padded(form.skeleton);
  object o;
  if (parser.parse(padded).get(root) || root.get(o)) return nullptr;
  try {
    return load_tokenizer_json(j, o, fingerprint, CompiledTables{form.model, form.bytes});
  } catch (const Error&) {
    return nullptr;  // never trusted: the file itself decides, as without a cache
  }
}

struct HashedFile {
  uint64_t hash, size;
};

// The XXH3 of a file of at least CompiledCache::kFromBytes that starts as a JSON object does,
// read in chunks through one small buffer; nullopt for any other file (or one that cannot be
// read: the full read reports it).
std::optional<HashedFile> hash_large_json(const std::filesystem::path& path) {
  std::error_code ec;
  const uint64_t size = std::filesystem::file_size(path, ec);
  if (ec || size < CompiledCache::kFromBytes || path.extension() == ".model") return std::nullopt;
  std::ifstream in(path, std::ios::binary);
  std::vector<char> buf(1 << 18);  // kept in the L2 cache: 1 MiB took 5% longer (Gemma 3)
  XXH3_state_t* state = XXH3_createState();
  XXH3_64bits_reset(state);
  uint64_t total = 0;
  bool json = false;
  while (in.read(buf.data(), static_cast<std::streamsize>(buf.size())) || in.gcount() > 0) {
    const auto n = static_cast<size_t>(in.gcount());
    if (total == 0) {
      const std::string_view head(buf.data(), n);
      const size_t p = head.find_first_not_of(" \t\r\n\xEF\xBB\xBF");
      json = p != std::string_view::npos && head[p] == '{';
      if (!json) break;
    }
    XXH3_64bits_update(state, buf.data(), n);
    total += n;
  }
  const uint64_t hash = XXH3_64bits_digest(state);
  XXH3_freeState(state);
  if (!json || in.bad() || total != size) return std::nullopt;
  return HashedFile{hash, size};
}

// A tokenizer.json; a large one's compiled form is stored in `cache` for the next load.
std::unique_ptr<Tokenizer> load_json_tokenizer(const Json& j, object root,
                                               const std::string& content,
                                               const CompiledCache* cache) {
  const uint64_t fingerprint = xxh3_64(content.data(), content.size());
  auto tokenizer = load_tokenizer_json(j, root, fingerprint);
  if (const auto* base = dynamic_cast<const TokenizerBase*>(tokenizer.get()); base && cache)
    if (std::string model = base->compiled_model(); !model.empty())
      cache->store(fingerprint, content.size(), skeleton_of(root), model);
  return tokenizer;
}

// A JSON object without a "model" is read as a GPT-2 encoder.json, which maps tokens to integer
// ids; another object (a tokenizer_config.json, a config.json) is named as not a tokenizer
// rather than blamed for missing merges.
void check_encoder_json(object root, const std::filesystem::path& path, const std::string& source) {
  for (auto [key, value] : root) {
    if (value.is_int64() || value.is_uint64()) continue;
    std::string why =
        "not a tokenizer: a JSON object that is neither a tokenizer.json (it has "
        "no \"model\") nor a GPT-2 encoder.json (whose values are token ids; \"" +
        std::string(key) + "\" is not)";
    if (path.filename() == "tokenizer_config.json")
      why += "; pass the tokenizer.json beside it (this file only configures it)";
    throw Error(ErrorCode::kInput, source, why);
  }
}

// A BPE merges file (vocab.bpe, merges.txt) is lines of two symbols with a space between, where a
// WordPiece vocab.txt has one token a line: read as one, it would only lack [UNK].
void check_not_merges(std::string_view content, const std::string& source) {
  const bool versioned = content.substr(0, 9) == "#version:";
  size_t pairs = 0, lines = 0;
  for (size_t at = 0; at < content.size() && lines < 8;) {
    size_t end = std::min(content.find('\n', at), content.size());
    const std::string_view line = content.substr(at, end - at);
    at = end + 1;
    if (line.empty() || line[0] == '#') continue;
    ++lines;
    const size_t space = line.find(' ');
    pairs += space != std::string_view::npos && space > 0 && space + 1 < line.size() &&
             line.find(' ', space + 1) == std::string_view::npos;
  }
  if (versioned || (lines > 0 && pairs == lines))
    throw Error(ErrorCode::kInput, source,
                "not a tokenizer but BPE merges (lines of two symbols): pass the tokenizer.json, "
                "or the GPT-2 encoder.json with these merges beside it as vocab.bpe");
}

enum class FileKind { kTokenizerJson, kSentencePiece, kEncoderJson, kVocabTxt };

const char* file_kind_name(FileKind kind) {
  switch (kind) {
    case FileKind::kTokenizerJson:
      return "a tokenizer.json";
    case FileKind::kSentencePiece:
      return "a SentencePiece model";
    case FileKind::kEncoderJson:
      return "a GPT-2 encoder.json";
    case FileKind::kVocabTxt:
      return "a WordPiece vocab.txt";
  }
  return "";
}

// The options only one kind of file reads: given for another, they would be silently ignored.
void check_options_apply(const Tokenizer::LoadOptions& options, FileKind kind,
                         const std::string& source) {
  const std::string is = std::string(", and this is ") + file_kind_name(kind);
  if (options.merges_path && kind != FileKind::kEncoderJson)
    throw Error(ErrorCode::kInvalidArgument, source,
                "a merges file is for a GPT-2 encoder.json" + is);
  if ((!options.lowercase || options.strip_accents) && kind != FileKind::kVocabTxt)
    throw Error(ErrorCode::kInvalidArgument, source,
                "keeping case or accents is a setting of a WordPiece vocab.txt" + is +
                    ", whose own normalizer decides them");
}

}  // namespace

std::unique_ptr<Tokenizer> Tokenizer::from_file(const std::filesystem::path& path,
                                                const LoadOptions& options) {
  const std::string source = path.string();
  // A large JSON file's compiled form, found by its bytes' hash, spares reading it into memory
  // and parsing it.
  std::optional<CompiledCache> cache;
  const auto cache_dir = CompiledCache::directory(options.compiled_cache);
  const bool caching = cache_dir && !cache_dir->empty();
  if (const auto hashed = caching ? hash_large_json(path) : std::nullopt) {
    cache.emplace(options.compiled_cache, options.compiled_cache_bytes);
    if (auto form = cache->find(hashed->hash, hashed->size)) {
      check_options_apply(options, FileKind::kTokenizerJson, source);
      if (auto tokenizer = load_compiled(*form, source, hashed->hash)) {
        if (auto* base = dynamic_cast<TokenizerBase*>(tokenizer.get()))
          apply_tokenizer_config(*base, path.parent_path() / "tokenizer_config.json");
        return tokenizer;
      }
    }
    if (!cache->usable()) cache.reset();
  }
  std::string content = read_all(path);
  if (looks_like_sentencepiece(path, content)) {
    check_options_apply(options, FileKind::kSentencePiece, source);
    return load_sentencepiece(content, source, xxh3_64(content.data(), content.size()));
  }
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
      check_options_apply(options, FileKind::kTokenizerJson, source);
      auto tokenizer = load_json_tokenizer(j, o, content, cache ? &*cache : nullptr);
      if (auto* base = dynamic_cast<TokenizerBase*>(tokenizer.get()))
        apply_tokenizer_config(*base, path.parent_path() / "tokenizer_config.json");
      return tokenizer;
    }
    check_encoder_json(o, path, source);
    check_options_apply(options, FileKind::kEncoderJson, source);
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
                    "GPT-2 encoder.json needs its merges: put them beside it as vocab.bpe or "
                    "merges.txt (or NAME-vocab.bpe beside NAME-encoder.json)");
    }
    std::string merges_content = read_all(merges);
    std::string both = content + '\0' + merges_content;
    return load_gpt2(j, root, merges, xxh3_64(both.data(), both.size()));
  }
  // A vocab.txt is lines of tokens; a .json file that is not an object is a damaged or foreign
  // file, whose lines would only make a WordPiece vocabulary that lacks [UNK].
  if (lowercase_extension(path) == ".json")
    throw Error(ErrorCode::kInput, source,
                "not a tokenizer: a .json tokenizer is a JSON object (a tokenizer.json or a GPT-2 "
                "encoder.json), and this file does not start with '{'");
  check_not_merges(content, source);
  check_options_apply(options, FileKind::kVocabTxt, source);
  std::string keyed = content + '\0' + (options.lowercase ? "lower" : "cased") + '\0' +
                      (options.strip_accents.value_or(options.lowercase) ? "strip" : "keep");
  return load_vocab_txt(content, source, options, xxh3_64(keyed.data(), keyed.size()));
}

}  // namespace shardkit::tok
