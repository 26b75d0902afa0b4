// The full parity check against HF tokenizers on every fixture line: ids (encode and
// encode_ids), offsets, ids with the post-processor's special tokens and type ids, and decode
// with and without skipping special tokens. Any differing line fails the test.
#pragma once

#include <doctest/doctest.h>
#include <simdjson.h>

#include "oracle_util.h"
#include "tokenizer/tokenizer.h"

namespace shardkit::testing {

using shardkit::tok::Encoding;
using shardkit::tok::Tokenizer;

struct Case {
  std::string name;
  std::filesystem::path ours;
  Tokenizer::LoadOptions options;
  std::filesystem::path oracle;
  // The input lines ('\n'-separated); empty: the fixture text (tests/data/tokenizer/*.txt).
  std::filesystem::path input = {};
  // The input holds documents that end with U+001E (hf_encode.js --records), not lines.
  bool records = false;
};

// Compares everything --full reports; returns the number of lines with any difference.
inline void check_full(const Case& c) {
  std::vector<std::string> lines;
  auto input = c.input;
  if (input.empty()) {
    input = fixture_text(&lines);
  } else {
    lines = split_lines(read_file(input), c.records ? '\x1e' : '\n');
  }
  auto expected = run_oracle(c.oracle, input, c.records ? "--full --records" : "--full", c.name);
  REQUIRE(expected.size() == lines.size());
  auto tok = Tokenizer::from_file(c.ours, c.options);
  simdjson::dom::parser parser;
  size_t id_diff = 0, offset_diff = 0, special_diff = 0, decode_diff = 0, shown = 0;
  for (size_t i = 0; i < lines.size(); ++i) {
    simdjson::dom::element doc = parser.parse(expected[i]).value();
    const std::string& line = lines[i];
    Encoding e = tok->encode(line);
    std::vector<uint32_t> fast;
    tok->encode_ids(line, fast);
    auto want_ids = json_u32s(doc["ids"]);
    bool ids_ok = e.ids == want_ids && fast == want_ids;
    bool offsets_ok = to_char_offsets(line, e.offsets) == json_offsets(doc["offsets"]);
    Encoding s = tok->post_process(e, std::nullopt);
    bool special_ok = s.ids == json_u32s(doc["special_ids"]) &&
                      s.type_ids == json_u32s(doc["special_type_ids"]) &&
                      s.size() == e.size() + tok->added_tokens(false);
    std::string_view text = doc["text"].get_string().value();
    std::string_view text_skip = doc["text_skip"].get_string().value();
    bool decode_ok = tok->decode(want_ids, false) == text &&
                     tok->decode(json_u32s(doc["special_ids"]), true) == text_skip;
    id_diff += !ids_ok;
    offset_diff += !offsets_ok;
    special_diff += !special_ok;
    decode_diff += !decode_ok;
    if ((!ids_ok || !offsets_ok || !special_ok || !decode_ok) && shown++ < 5) {
      MESSAGE(c.name << " line " << i + 1 << ": " << line.substr(0, 200) << "\n  ours ids "
                     << ids_text(e.ids) << "\n  ours offsets "
                     << offsets_text(to_char_offsets(line, e.offsets)) << "\n  ours special "
                     << ids_text(s.ids) << "\n  ours decode " << tok->decode(want_ids, false)
                     << "\n  HF   " << expected[i].substr(0, 2000));
    }
  }
  MESSAGE(c.name << ": " << lines.size() - id_diff << "/" << lines.size()
                 << " lines identical ids, " << lines.size() - offset_diff << " offsets, "
                 << lines.size() - special_diff << " with specials, " << lines.size() - decode_diff
                 << " decodes");
  CHECK(id_diff == 0);
  CHECK(offset_diff == 0);
  CHECK(special_diff == 0);
  CHECK(decode_diff == 0);
}

}  // namespace shardkit::testing
