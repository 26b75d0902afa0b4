// The UnicodeScripts pre-tokenizer against HuggingFace tokenizers (tests/oracle): its splits
// (HF's pre_tokenize_str) on the fixture lines, the lines written for it
// (tests/data/tokenizer_scripts) and lines built to cover every code point; and full parity
// (ids, offsets, decode) of WordLevel and Unigram tokenizers behind it, alone or in a Sequence.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "parity_check.h"
#include "tokenizer/pre_tokenizers.h"
#include "tokenizer/unicode.h"
#include "tokenizer/unicode_scripts.h"

using namespace shardkit;
using namespace shardkit::testing;
using shardkit::tok::PreTokenizer;

namespace {

PreTokenizer scripts() {
  PreTokenizer p;
  p.kind = PreTokenizer::kUnicodeScripts;
  return p;
}

PreTokenizer sequence(std::vector<PreTokenizer> children) {
  PreTokenizer p;
  p.kind = PreTokenizer::kSequence;
  p.children = std::move(children);
  return p;
}

// Our pieces of one line: text and code point offsets in the line.
std::vector<std::pair<std::string, std::pair<uint32_t, uint32_t>>> pieces(const PreTokenizer& p,
                                                                          const std::string& line) {
  std::vector<PreTokenizer::Piece> ps;
  ps.push_back({tok::NormalizedString(line, true), PreTokenizer::Start::kText});
  p.apply(ps);
  std::vector<std::pair<uint32_t, uint32_t>> bytes;
  for (const auto& x : ps) bytes.push_back(x.s.original_span(0, x.s.text().size()));
  auto chars = to_char_offsets(line, bytes);
  std::vector<std::pair<std::string, std::pair<uint32_t, uint32_t>>> out;
  for (size_t k = 0; k < ps.size(); ++k) out.emplace_back(ps[k].s.text(), chars[k]);
  return out;
}

PreTokenizer whitespace() {
  PreTokenizer p;
  p.kind = PreTokenizer::kWhitespace;
  return p;
}

// A WordLevel tokenizer.json behind `pre_tokenizer`; its vocabulary is the first pieces our
// UnicodeScripts makes of the lines, alone and followed by Whitespace (so that many tokens are
// known, not [UNK]).
std::filesystem::path word_level(const std::string& name, const nlohmann::json& normalizer,
                                 const nlohmann::json& pre_tokenizer,
                                 const std::vector<std::string>& lines) {
  nlohmann::json vocab = {{"[UNK]", 0}};
  int next = 1;
  for (const PreTokenizer& p : {scripts(), sequence({scripts(), whitespace()})})
    for (const auto& l : lines)
      for (auto& [text, span] : pieces(p, l))
        if (next < 4000 && !vocab.contains(text)) vocab[text] = next++;
  nlohmann::json j = {{"version", "1.0"},
                      {"truncation", nullptr},
                      {"padding", nullptr},
                      {"added_tokens", nlohmann::json::array()},
                      {"normalizer", normalizer},
                      {"pre_tokenizer", pre_tokenizer},
                      {"post_processor", nullptr},
                      {"decoder", nullptr},
                      {"model", {{"type", "WordLevel"}, {"vocab", vocab}, {"unk_token", "[UNK]"}}}};
  auto path = oracle_files() / (name + ".json");
  write_file(path, j.dump());
  return path;
}

// Compares our pre-tokenizer's pieces with HF's pre_tokenize_str of `tokenizer`'s pre-tokenizer
// on every line of `input`; returns the number of lines that differ.
size_t compare_splits(const std::string& name, const std::filesystem::path& tokenizer,
                      const PreTokenizer& ours, const std::filesystem::path& input) {
  auto lines = split_lines(read_file(input));
  auto out = oracle_files() / (name + "-splits-" + std::to_string(::getpid()) + ".jsonl");
  std::string log;
  int rc = run_command("node " + (oracle_dir() / "hf_pre_tokenize.js").string() + " " +
                           tokenizer.string() + " " + input.string() + " " + out.string(),
                       &log);
  REQUIRE_MESSAGE(rc == 0, "hf_pre_tokenize.js failed: " << log);
  auto expected = split_lines(read_file(out));
  REQUIRE(expected.size() == lines.size());
  simdjson::dom::parser parser;
  size_t diff = 0, total = 0;
  for (size_t i = 0; i < lines.size(); ++i) {
    simdjson::dom::element doc = parser.parse(expected[i]).value();
    std::vector<std::pair<std::string, std::pair<uint32_t, uint32_t>>> want;
    for (simdjson::dom::element x : doc.get_array()) {
      simdjson::dom::array pair = x.get_array();
      auto offsets = json_u32s(pair.at(1));
      if (offsets.size() != 2) FAIL("not an offset pair: " << simdjson::to_string(x));
      want.emplace_back(std::string(pair.at(0).get_string().value()),
                        std::make_pair(offsets[0], offsets[1]));
    }
    auto got = pieces(ours, lines[i]);
    total += want.size();
    if (got == want) continue;
    if (diff++ < 5) {
      std::string g, w;
      for (auto& [t, o] : got)
        g += "[" + t + " " + std::to_string(o.first) + "," + std::to_string(o.second) + "]";
      for (auto& [t, o] : want)
        w += "[" + t + " " + std::to_string(o.first) + "," + std::to_string(o.second) + "]";
      MESSAGE(name << " line " << i + 1 << ": " << lines[i].substr(0, 200) << "\n  ours "
                   << g.substr(0, 1000) << "\n  HF   " << w.substr(0, 1000));
    }
  }
  MESSAGE(name << ": " << lines.size() - diff << "/" << lines.size() << " lines split as HF ("
               << total << " pieces)");
  return diff;
}

// Lines that pin down the whole script table: per script (as HF's fixed_script groups them),
// all its code points in one line (HF must make one piece: none is Any to it and all share its
// script); one line of a code point of each script (a piece each: all scripts differ); and every
// code point between two Greek, then two Latin letters (which ones are Any). '\n' (Common, the
// line separator) and surrogates are left out.
std::filesystem::path every_code_point() {
  std::vector<std::string> by_script(256);
  std::string firsts;
  for (char32_t c = 0; c <= 0x10FFFF; ++c) {
    if (c == '\n' || (c >= 0xD800 && c <= 0xDFFF)) continue;
    uint8_t s = tok::hf_script(c);
    if (s == tok::kScriptAny) continue;
    if (by_script[s].empty()) tok::append_utf8(firsts, c);
    tok::append_utf8(by_script[s], c);
  }
  std::string all;
  for (const auto& line : by_script)
    if (!line.empty()) all += line + "\n";
  all += firsts + "\n";
  for (char32_t context : {U'\u03B1', U'a'}) {
    std::string line;
    size_t n = 0;
    for (char32_t c = 0; c <= 0x10FFFF; ++c) {
      if (c == '\n' || (c >= 0xD800 && c <= 0xDFFF)) continue;
      tok::append_utf8(line, context);
      tok::append_utf8(line, c);
      if (++n % 4096 == 0) {
        tok::append_utf8(line, context);
        all += line + "\n";
        line.clear();
      }
    }
    tok::append_utf8(line, context);
    all += line + "\n";
  }
  auto path = oracle_files() / ("every-code-point-" + std::to_string(::getpid()) + ".txt");
  write_file(path, all);
  return path;
}

const nlohmann::json kScripts = {{"type", "UnicodeScripts"}};

}  // namespace

TEST_CASE("UnicodeScripts splits every fixture line and every code point as HF does") {
  MESSAGE("script table from " << std::string(tok::script_source()) << ", Unicode 9.0 code points");
  CHECK(tok::hf_script(U'a') != tok::hf_script(U'\u0430'));
  CHECK(tok::hf_script(U'\u3042') == tok::hf_script(U'\u6F22'));  // Hiragana counted as Han
  CHECK(tok::hf_script(U'\u30FC') == tok::hf_script(U'\u6F22'));
  CHECK(tok::hf_script(U' ') == tok::kScriptAny);
  CHECK(tok::hf_script(U'\u00A0') != tok::kScriptAny);      // NBSP is Common
  CHECK(tok::hf_script(U'\U00030000') == tok::kScriptAny);  // CJK Ext G: Unicode 13.0
  CHECK(std::string(tok::script_name(tok::hf_script(U'\u0589'))) == "Common");
  std::vector<std::string> lines;
  auto input = scripts_fixture_text(&lines);
  auto file = word_level("unicode_scripts_wordlevel", nullptr, kScripts, lines);
  CHECK(compare_splits("unicode_scripts", file, scripts(), input) == 0);
  CHECK(compare_splits("unicode_scripts_every_code_point", file, scripts(), every_code_point()) ==
        0);
}

TEST_CASE("WordLevel behind UnicodeScripts, alone and in a Sequence with Whitespace, matches HF") {
  std::vector<std::string> lines;
  auto input = scripts_fixture_text(&lines);
  auto alone = word_level("unicode_scripts_wordlevel", nullptr, kScripts, lines);
  check_full({"unicode_scripts_wordlevel", alone, {}, alone, input});
  const nlohmann::json seq = {{"type", "Sequence"},
                              {"pretokenizers", {kScripts, {{"type", "Whitespace"}}}}};
  auto xlm = word_level("unicode_scripts_whitespace_wordlevel", {{"type", "NFKC"}}, seq, lines);
  check_full({"unicode_scripts_whitespace_wordlevel", xlm, {}, xlm, input});
  CHECK(compare_splits("unicode_scripts_whitespace", xlm, sequence({scripts(), whitespace()}),
                       input) == 0);
  const nlohmann::json rev = {{"type", "Sequence"},
                              {"pretokenizers",
                               {{{"type", "Punctuation"}, {"behavior", "Isolated"}},
                                {{"type", "Digits"}, {"individual_digits", false}},
                                kScripts}}};
  auto other = word_level("unicode_scripts_after_punct", nullptr, rev, lines);
  check_full({"unicode_scripts_after_punct", other, {}, other, input});
}
