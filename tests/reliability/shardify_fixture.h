// What the shardify reliability tests share: a small WordPiece vocab.txt written at test time
// (no tokenizer download needed), generated corpora, running the tool, and comparing datasets.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "core/dataset.h"
#include "reliability_util.h"

namespace shardkit::reliability {

inline std::string shardify_path() { return testing::tool_path("shardify/shardify"); }

inline const std::vector<std::string>& fixture_words() {
  static const std::vector<std::string> words = {
      "the",   "of",     "and",  "to",     "in",    "data",  "shard", "model", "token", "block",
      "train", "record", "file", "loader", "hello", "world", "fast",  "safe",  "crash", "test"};
  return words;
}

// A WordPiece vocabulary: specials, the fixture words, single letters and their ## forms.
inline fs::path write_vocab(const fs::path& dir) {
  std::string v = "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\n";
  for (const std::string& w : fixture_words()) v += w + "\n";
  for (char c = 'a'; c <= 'z'; ++c) v += std::string(1, c) + "\n##" + std::string(1, c) + "\n";
  for (char c : std::string(".,!?'\"0123456789")) v += std::string(1, c) + "\n";
  const fs::path p = dir / "vocab.txt";
  testing::write_file(p, v);
  return p;
}

// `lines` documents of pseudo-random fixture words (and some out-of-vocabulary words, which
// WordPiece splits into letters), one per line.
inline std::string corpus_lines(uint64_t lines, uint64_t seed) {
  std::string out;
  const auto& words = fixture_words();
  for (uint64_t i = 0; i < lines; ++i) {
    const uint64_t n = 4 + splitmix64(seed * 7919 + i) % 24;
    for (uint64_t k = 0; k < n; ++k) {
      const uint64_t r = splitmix64(seed * 104729 + i * 131 + k);
      if (k) out += ' ';
      if (r % 5 == 0) {
        for (int c = 0; c < 3 + static_cast<int>(r % 5); ++c)
          out += static_cast<char>('a' + (r >> (8 + c * 5)) % 26);
      } else {
        out += words[r % words.size()];
      }
    }
    out += '\n';
  }
  return out;
}

inline std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// Runs shardify with `args` (already quoted); returns the exit status, output in `out`.
inline int run_shardify(const std::string& args, std::string* out = nullptr) {
  return testing::run_command(shardify_path() + " " + args, out);
}

// Every record of both datasets, byte for byte (but for the fields named in `ignore`); an empty
// string when they agree, else why not.
inline std::string compare_datasets(const fs::path& a, const fs::path& b,
                                    const std::vector<std::string>& ignore = {}) {
  try {
    const Dataset da = Dataset::open(a), db = Dataset::open(b);
    if (!(da.schema() == db.schema())) return "schemas differ";
    if (da.size() != db.size())
      return std::to_string(da.size()) + " vs " + std::to_string(db.size()) + " records";
    std::vector<unsigned char> ra(da.schema().record_size()), rb(ra.size());
    for (uint64_t i = 0; i < da.size(); ++i) {
      da.read(i, ra.data());
      db.read(i, rb.data());
      for (const Field& f : da.schema().fields()) {
        if (std::find(ignore.begin(), ignore.end(), f.name) != ignore.end()) continue;
        if (std::memcmp(ra.data() + f.offset, rb.data() + f.offset, f.byte_size()) != 0)
          return "record " + std::to_string(i) + " differs in " + f.name;
      }
    }
  } catch (const Error& e) {
    return e.what();
  }
  return {};
}

}  // namespace shardkit::reliability
