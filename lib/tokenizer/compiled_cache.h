// Compiled forms of large tokenizer.json files, kept in the user's cache directory, so that a
// tokenizer with a large vocabulary loads in tens of milliseconds after its first load: Gemma 3's
// 262k tokens and 515k merges take about 0.3 s to index from the JSON (hash tables larger than
// the caches), its compiled form is read and checked at memory speed.
//
// A compiled form is the tokenizer.json without its model's vocab and merges (the rest is read
// as from the file) and the model's tables as built from them (blob.h). It is found by the XXH3
// of the file's bytes (the fingerprint a dataset records anyway), so a changed file never meets
// a stale form. Nothing in it is trusted: its header names the format version, the file's hash
// and size, and the payload's XXH3; the tables are bounds-checked as they are read; any
// mismatch or damage makes the load build the tables again and store them afresh.
//
// The cache owns only what it writes. Its directory (Tokenizer::LoadOptions::compiled_cache, else
// $SHARDKIT_TOKENIZER_CACHE, else $XDG_CACHE_HOME/shardkit/tokenizers, else
// ~/.cache/shardkit/tokenizers) is created with a
// CACHEDIR.TAG naming shardkit, and a directory of that name without the tag is not used. Inside
// it, only files named by a hash (`<16 hex digits>.tokenizer-v<format>`) are read, always
// through the directory's descriptor and never through a symbolic link, and written under a
// temporary name of the process's own (created exclusively), then renamed into place: a reader
// never sees a torn file. Nothing is ever deleted but a temporary file of the process's own
// whose write failed, and forms of its own naming once the directory's forms exceed their bound
// (least recently used first). Failures to create, read or write are not errors: the tokenizer
// loads from its file as without a cache.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace shardkit::tok {

// A compiled form as read: views into the file's bytes, which it holds. The model's tables start
// at a multiple of 8 bytes in memory, so that they are restored as views (blob.h).
struct CompiledForm {
  std::shared_ptr<const char[]> bytes;
  std::string_view skeleton;  // the tokenizer.json without model.vocab and model.merges
  std::string_view model;     // the model's tables (TokenizerBase::compiled_model)
};

class CompiledCache {
 public:
  // Files smaller than this load fast enough from the JSON. GPT-2's 1.36 MB file takes 0.036 s
  // from the JSON and 0.005 s from its form, 2% of a 48 MB conversion at one thread.
  static constexpr uint64_t kFromBytes = 1u << 20;
  // Bumped whenever the tables or this layout change: forms of other versions are not read.
  static constexpr uint32_t kFormat = 8;

  // The cache in `dir` (nullopt: the default directory; empty: no cache), whose forms are kept
  // within `max_bytes` (Tokenizer::LoadOptions::compiled_cache_bytes; the form just stored
  // always stays).
  CompiledCache(const std::optional<std::filesystem::path>& dir, uint64_t max_bytes);
  ~CompiledCache();
  CompiledCache(const CompiledCache&) = delete;
  CompiledCache& operator=(const CompiledCache&) = delete;

  // The directory a cache for `dir` would use (as the constructor reads `dir`); nullopt or an
  // empty path when there is none, so that a caller can skip hashing the file.
  static std::optional<std::filesystem::path> directory(
      const std::optional<std::filesystem::path>& dir);

  bool usable() const { return dir_fd_ >= 0; }
  // The form stored for the file whose bytes have this XXH3 and size, when a valid one is.
  std::optional<CompiledForm> find(uint64_t hash, uint64_t size) const;
  // Stores a form, replacing one of the same name (a damaged one), then removes the least
  // recently used forms beyond max_bytes; failures are ignored.
  void store(uint64_t hash, uint64_t size, std::string_view skeleton, std::string_view model) const;
  // The file name a form takes (for tests).
  static std::string file_name(uint64_t hash);

 private:
  // Removes the least recently used forms (by modification time, which find() renews) until
  // the rest fit in max_bytes_, never `keep`; only regular files named as forms are counted.
  void trim(const std::string& keep) const;

  int dir_fd_ = -1;
  uint64_t max_bytes_;
};

}  // namespace shardkit::tok
