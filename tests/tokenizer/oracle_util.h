// Runs HuggingFace tokenizers (npm, tests/oracle) and SentencePiece (Debian's spm_train and
// python3-sentencepiece) on the fixture text and reads their answers.
// The oracle must be installed (scripts/install-deps.sh); a missing oracle fails the test.
#pragma once

#include <unistd.h>

#include <doctest/doctest.h>
#include <simdjson.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "test_util.h"

namespace shardkit::testing {

inline std::filesystem::path oracle_dir() {
  return std::filesystem::path(SHARDKIT_SOURCE_DIR) / "tests" / "oracle";
}

// Tokenizer files made by tests/oracle/make_tokenizers.js, in the build tree (made once).
inline std::filesystem::path oracle_files() {
  static const std::filesystem::path dir = [] {
    auto d = std::filesystem::path(SHARDKIT_BINARY_DIR) / "tokenizer-oracle";
    REQUIRE_MESSAGE(
        std::filesystem::exists(oracle_dir() / "node_modules" / "tokenizers"),
        "HF tokenizers oracle missing: run scripts/install-deps.sh (npm ci in tests/oracle)");
    if (!std::filesystem::exists(d / "llama3-template.json")) {  // the last file written
      // Test programs run in parallel: each writes a directory of its own and renames it into
      // place, so none reads files another is still writing.
      const std::string mine = d.string() + ".tmp-" + std::to_string(::getpid());
      std::string out;
      int rc =
          run_command("node " + (oracle_dir() / "make_tokenizers.js").string() + " " + mine, &out);
      REQUIRE_MESSAGE(rc == 0, "make_tokenizers.js failed: " << out);
      std::error_code ec;
      std::filesystem::rename(mine, d, ec);
      if (ec && !std::filesystem::exists(d / "llama3-template.json")) {  // a killed run's leftovers
        std::filesystem::remove_all(d, ec);
        std::filesystem::rename(mine, d, ec);
      }
      if (ec) std::filesystem::remove_all(mine, ec);  // another test program was first
    }
    return d;
  }();
  return dir;
}

inline std::filesystem::path npm_file(const std::string& rel) {
  return oracle_dir() / "node_modules" / rel;
}

// Text split at '\n' as the oracle scripts split it (a final newline ends the last line).
inline std::vector<std::string> split_lines(const std::string& all, char separator = '\n') {
  std::vector<std::string> lines;
  size_t pos = 0;
  while (pos < all.size()) {
    size_t nl = all.find(separator, pos);
    if (nl == std::string::npos) nl = all.size();
    lines.push_back(all.substr(pos, nl - pos));
    pos = nl + 1;
  }
  return lines;
}

// All fixture lines (tests/data/tokenizer/*.txt, sorted by name) in one file; returns its path.
inline std::filesystem::path fixture_text(std::vector<std::string>* lines = nullptr) {
  auto dir = std::filesystem::path(SHARDKIT_SOURCE_DIR) / "tests" / "data" / "tokenizer";
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().extension() == ".txt") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  std::string all;
  for (const auto& f : files) {
    std::string t = read_file(f);
    if (!t.empty() && t.back() != '\n') t.push_back('\n');
    all += t;
  }
  // Per process: parallel test programs would otherwise rewrite it under each other's readers.
  auto out = oracle_files() / ("fixtures-" + std::to_string(::getpid()) + ".txt");
  write_file(out, all);
  if (lines) *lines = split_lines(all);
  return out;
}

// Runs hf_encode.js; returns one JSON document per line.
// The fixture lines followed by tests/data/tokenizer_scripts/*.txt (lines written for the
// UnicodeScripts pre-tokenizer), in one file; returns its path.
inline std::filesystem::path scripts_fixture_text(std::vector<std::string>* lines = nullptr) {
  auto out = fixture_text();
  std::string all = read_file(out);
  auto dir = std::filesystem::path(SHARDKIT_SOURCE_DIR) / "tests" / "data" / "tokenizer_scripts";
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().extension() == ".txt") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  for (const auto& f : files) {
    std::string t = read_file(f);
    if (!t.empty() && t.back() != '\n') t.push_back('\n');
    all += t;
  }
  out = oracle_files() / ("scripts-fixtures-" + std::to_string(::getpid()) + ".txt");
  write_file(out, all);
  if (lines) *lines = split_lines(all);
  return out;
}

inline std::vector<std::string> run_oracle(const std::filesystem::path& tokenizer,
                                           const std::filesystem::path& input,
                                           const std::string& flags, const std::string& tag) {
  auto out = oracle_files() / (tag + "-" + std::to_string(::getpid()) + ".jsonl");
  std::string log;
  int rc =
      run_command("node " + (oracle_dir() / "hf_encode.js").string() + " " + tokenizer.string() +
                      " " + input.string() + " " + out.string() + " " + flags,
                  &log);
  REQUIRE_MESSAGE(rc == 0, "hf_encode.js failed: " << log);
  return split_lines(read_file(out));
}

// Trains (once per build tree) a SentencePiece model on the fixture text with Debian's
// spm_train; returns the .model path.
inline std::filesystem::path train_spm_model(const std::string& name, const std::string& flags) {
  auto dir = oracle_files() / "spm";
  std::filesystem::create_directories(dir);
  auto model = dir / (name + ".model");
  if (!std::filesystem::exists(model)) {
    auto input = fixture_text();
    std::string log;
    int rc = run_command("spm_train --input=" + input.string() +
                             " --model_prefix=" + (dir / name).string() +
                             " --vocab_size=1200 --hard_vocab_limit=false --num_threads=1 "
                             "--character_coverage=0.995 " +
                             flags,
                         &log);
    REQUIRE_MESSAGE(rc == 0, "spm_train failed: " << log);
  }
  return model;
}

// SentencePiece's own ids (python3-sentencepiece) for each record of `input`, records ending
// with U+001E (newlines inside them, which spm_encode cannot take): a JSON array a line.
inline std::vector<std::string> run_spm_oracle(const std::filesystem::path& model,
                                               const std::filesystem::path& input,
                                               const std::string& tag) {
  auto out = oracle_files() / (tag + "-" + std::to_string(::getpid()) + ".jsonl");
  std::string log;
  int rc = run_command("/usr/bin/python3 " + (oracle_dir() / "spm_encode_records.py").string() +
                           " " + model.string() + " " + input.string() + " " + out.string(),
                       &log);
  REQUIRE_MESSAGE(rc == 0, "spm_encode_records.py failed: " << log);
  return split_lines(read_file(out));
}

inline std::vector<uint32_t> json_u32s(simdjson::dom::element e) {
  std::vector<uint32_t> v;
  simdjson::dom::array a;
  if (e.get(a)) FAIL("not an array: " << simdjson::to_string(e));
  for (simdjson::dom::element x : a) {
    int64_t n = 0;
    if (x.get(n)) FAIL("not an integer: " << simdjson::to_string(x));
    v.push_back(static_cast<uint32_t>(n));
  }
  return v;
}

inline std::vector<std::pair<uint32_t, uint32_t>> json_offsets(simdjson::dom::element e) {
  std::vector<std::pair<uint32_t, uint32_t>> v;
  simdjson::dom::array list;
  if (e.get(list)) FAIL("not an array: " << simdjson::to_string(e));
  for (simdjson::dom::element x : list) {
    std::vector<uint32_t> pair = json_u32s(x);
    if (pair.size() != 2) FAIL("not an offset pair: " << simdjson::to_string(x));
    v.emplace_back(pair[0], pair[1]);
  }
  return v;
}

// Byte offsets -> code point offsets (the node binding reports code points).
inline std::vector<std::pair<uint32_t, uint32_t>> to_char_offsets(
    const std::string& text, const std::vector<std::pair<uint32_t, uint32_t>>& bytes) {
  std::vector<uint32_t> before(text.size() + 1, 0);  // characters starting before byte i
  for (size_t i = 0; i < text.size(); ++i)
    before[i + 1] = before[i] + ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80 ? 1 : 0);
  std::vector<std::pair<uint32_t, uint32_t>> out;
  for (auto [a, b] : bytes) out.emplace_back(before[a], before[b]);
  return out;
}

inline std::string ids_text(const std::vector<uint32_t>& ids) {
  std::string s = "[";
  for (size_t i = 0; i < ids.size(); ++i) s += (i ? "," : "") + std::to_string(ids[i]);
  return s + "]";
}

inline std::string offsets_text(const std::vector<std::pair<uint32_t, uint32_t>>& o) {
  std::string s = "[";
  for (size_t i = 0; i < o.size(); ++i)
    s += (i ? ",[" : "[") + std::to_string(o[i].first) + "," + std::to_string(o[i].second) + "]";
  return s + "]";
}

}  // namespace shardkit::testing
