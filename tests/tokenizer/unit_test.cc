// Tokenizer behaviour that needs no oracle: loading errors, invalid input, truncation
// arithmetic (HF's own table), thread safety, and small hand-checked vocabularies.
#include <doctest/doctest.h>

#include <algorithm>
#include <fstream>
#include <random>
#include <thread>
#include <tuple>

#include "core/error.h"
#include "core/zeroed_pages.h"
#include "test_util.h"
#include "tokenizer/ascii_masks.h"
#include "tokenizer/byte_key_cache.h"
#include "tokenizer/byte_level.h"
#include "tokenizer/escape_spaces.h"
#include "tokenizer/hot_word_table.h"
#include "tokenizer/joined_char_pairs.h"
#include "tokenizer/piece_scanner.h"
#include "tokenizer/string_list.h"
#include "tokenizer/string_map.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/unicode.h"

using namespace shardkit;
using namespace shardkit::testing;
using shardkit::tok::Encoding;
using shardkit::tok::Tokenizer;

namespace {

// The vectorized form of a pattern at one position (masks computed there), for the comparison
// with Oniguruma.
template <tok::PiecePattern kPattern>
size_t vectorized(std::string_view text, size_t pos) {
  return tok::PieceScanner<kPattern>::match(text, pos);
}

// Walks each text with the scanner (which reuses its masks for the pieces that start in them),
// a piece at a time and a window's pieces at a time, and with the hand matcher; returns how many
// pieces were compared and how many walks differ.
template <tok::PiecePattern kPattern>
std::pair<size_t, size_t> walk(const std::vector<std::string>& texts, tok::SplitMatcher matcher) {
  size_t pieces = 0, differ = 0;
  const auto check = [&](const std::string& t, size_t pos, size_t got, const char* how) {
    const size_t want = matcher(t, pos);
    ++pieces;
    if (got == want) return true;
    if (++differ <= 5)
      MESSAGE("scanner (" << std::string(how) << ") at byte " << pos << " of '" << t << "': " << got
                          << ", hand matcher " << want);
    return false;
  };
  for (const std::string& t : texts) {
    tok::PieceScanner<kPattern> scanner(t);
    for (size_t pos = 0; pos < t.size();) {
      const size_t got = scanner.next(pos);
      if (!check(t, pos, got, "next")) break;
      pos = got;
    }
    tok::PieceScanner<kPattern> windows(t);
    size_t ends[64];
    for (size_t pos = 0, ok = 1; ok && pos < t.size();) {
      const size_t count = windows.next_pieces(pos, ends);
      for (size_t k = 0; ok && k < count; ++k) {
        ok = check(t, pos, ends[k], "next_pieces");
        pos = ends[k];
      }
    }
  }
  return {pieces, differ};
}

const char* kVocab =
    "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\nhello\nworld\n##s\nun\n##aff\n##able\n!\n,\na\n##"
    "b\ncafe\n";

// A minimal WordPiece tokenizer.json around kVocab's ids; `patch` replaces one component.
std::string wordpiece_json(const std::string& key = "", const std::string& value = "") {
  auto part = [&](const std::string& k, const std::string& def) { return k == key ? value : def; };
  return "{\"version\":\"1.0\",\"truncation\":" + part("truncation", "null") +
         ",\"padding\":null,\"added_tokens\":" + part("added_tokens", "[]") + ",\"normalizer\":" +
         part(
             "normalizer",
             R"({"type":"BertNormalizer","clean_text":true,"handle_chinese_chars":true,"strip_accents":null,"lowercase":true})") +
         ",\"pre_tokenizer\":" + part("pre_tokenizer", R"({"type":"BertPreTokenizer"})") +
         ",\"post_processor\":" +
         part("post_processor",
              R"({"type":"BertProcessing","sep":["[SEP]",3],"cls":["[CLS]",2]})") +
         ",\"decoder\":" + part("decoder", R"({"type":"WordPiece","prefix":"##","cleanup":true})") +
         ",\"model\":" +
         part(
             "model",
             R"({"type":"WordPiece","unk_token":"[UNK]","continuing_subword_prefix":"##","max_input_chars_per_word":100,"vocab":{"[PAD]":0,"[UNK]":1,"[CLS]":2,"[SEP]":3,"[MASK]":4,"hello":5,"world":6,"##s":7,"un":8,"##aff":9,"##able":10,"!":11,",":12,"a":13,"##b":14,"cafe":15}})") +
         "}";
}

std::unique_ptr<Tokenizer> load_text(const TempDir& dir, const std::string& name,
                                     const std::string& content) {
  write_file(dir / name, content);
  return Tokenizer::from_file(dir / name);
}

void expect_unsupported(const std::string& json, const std::string& names) {
  TempDir dir("tok");
  write_file(dir / "tokenizer.json", json);
  try {
    Tokenizer::from_file(dir / "tokenizer.json");
    FAIL("loaded unsupported content: " << names);
  } catch (const Error& e) {
    CHECK(e.code() == ErrorCode::kUnsupported);
    CHECK_MESSAGE(std::string(e.what()).find(names) != std::string::npos, e.what());
  }
}

}  // namespace

TEST_CASE("hash_bytes is the documented arithmetic, so that stored tables keep finding keys") {
  // Compiled forms hold hash tables laid out by hash_bytes: the same key must hash the same in
  // every version of the same form format. The definition, written plainly: each 8 bytes as a
  // little-endian word, the last 1-7 zero-padded to one.
  const auto reference = [](const char* p, size_t n) {
    constexpr uint64_t kMul = 0x9E3779B97F4A7C15ULL;
    uint64_t h = 0x243F6A8885A308D3ULL ^ (n * kMul);
    for (size_t at = 0; at < n; at += 8) {
      uint64_t w = 0;
      for (size_t k = 0; k < 8 && at + k < n; ++k)
        w |= uint64_t{static_cast<unsigned char>(p[at + k])} << (8 * k);
      h = (h ^ w) * kMul;
      h ^= h >> 29;
    }
    h *= 0xBF58476D1CE4E5B9ULL;
    return h ^ (h >> 32);
  };
  std::mt19937_64 rng(7);
  char key[48];
  for (int t = 0; t < 100000; ++t) {
    const size_t n = rng() % sizeof key;
    for (size_t i = 0; i < n; ++i) key[i] = static_cast<char>(rng());
    CAPTURE(n);
    REQUIRE(shardkit::tok::hash_bytes(key, n) == reference(key, n));
  }
  CHECK(shardkit::tok::hash_bytes("", 0) == reference("", 0));
}

TEST_CASE("the hot table's key of a word is the same at a text's end as inside it") {
  // Inside a text the key is two 16-byte loads masked to the word; within 16 bytes of its end,
  // loads that stay inside the word. A word looked up both ways must find the same slot, and two
  // words must never share a key.
  using Hot = tok::HotWordTable<uint32_t, 3>;
  std::mt19937 rng(11);
  std::string inside(64, '\0');
  size_t wrong = 0, compared = 0;
  for (int round = 0; round < 2000; ++round) {
    for (char& c : inside) c = static_cast<char>(rng());
    for (size_t n = 1; n <= Hot::kMaxKeyBytes; ++n) {
      const std::string word = inside.substr(0, n);  // its own allocation: nothing readable after
      const Hot::Key at_end = Hot::key(word.data(), n, word.data() + n);
      const Hot::Key within = Hot::key(inside.data(), n, inside.data() + inside.size());
      uint64_t lo = 0, hi = 0;
      std::memcpy(&lo, word.data(), std::min<size_t>(n, 8));
      if (n > 8) std::memcpy(&hi, word.data() + 8, n - 8);
      wrong += at_end.lo != within.lo || at_end.hi != within.hi || at_end.len != n ||
               within.len != n || at_end.lo != lo || at_end.hi != hi;
      ++compared;
    }
  }
  CHECK(compared == 2000 * Hot::kMaxKeyBytes);
  CHECK(wrong == 0);
}

TEST_CASE("the word memo finds each word it stored, with its ids, and no word it did not") {
  // Its filter of the hashes stored answers "never stored" without probing the slots: a word
  // stored and then not found would be tokenized again every time it came back, the right ids
  // at a first pass's cost, which no test of ids sees.
  tok::ByteKeyCache<uint32_t> memo;
  const auto word = [](const char* prefix, uint32_t i) { return prefix + std::to_string(i); };
  constexpr uint32_t kWords = 100000;
  for (uint32_t i = 0; i < kWords; ++i) {
    const uint32_t ids[] = {i, i + 1, i % 7};
    memo.insert(word(" stored", i), std::span<const uint32_t>(ids, 1 + i % 3));
  }
  size_t wrong = 0, false_finds = 0;
  for (uint32_t i = 0; i < kWords; ++i) {
    std::span<const uint32_t> ids;
    const bool found = memo.find(word(" stored", i), &ids);
    wrong +=
        !found || ids.size() != 1 + i % 3 || ids[0] != i || (ids.size() > 1 && ids[1] != i + 1);
    false_finds += memo.find(word(" absent", i), &ids);
  }
  CHECK(wrong == 0);
  CHECK(false_finds == 0);
}

TEST_CASE(
    "the memos' zeroed pages: zero, writable, 2 MiB arrays at 2 MiB boundaries, all unmapped") {
  // An array of 2 MiB or more is mapped 2 MiB larger and trimmed to a 2 MiB boundary, so that
  // huge pages can back it; what is trimmed, and the array itself, must leave no mapping behind.
  const auto mappings = [] {
    std::ifstream maps("/proc/self/maps");
    return std::count(std::istreambuf_iterator<char>(maps), std::istreambuf_iterator<char>(), '\n');
  };
  const auto before = mappings();
  for (int round = 0; round < 50; ++round) {
    ZeroedPages<uint64_t> small(100), large((size_t{6} << 20) / 8 + round);
    CHECK(reinterpret_cast<uintptr_t>(&large[0]) % (size_t{2} << 20) == 0);
    CHECK(std::all_of(large.begin(), large.end(), [](uint64_t v) { return v == 0; }));
    CHECK(std::all_of(small.begin(), small.end(), [](uint64_t v) { return v == 0; }));
    std::fill(large.begin(), large.end(), ~uint64_t{0});
    small[99] = 1;
  }
  CHECK(mappings() == before);
}

TEST_CASE("WordPiece greedy longest match, ## continuation, unknown words") {
  TempDir dir("tok");
  auto tok = load_text(dir, "vocab.txt", kVocab);
  std::vector<uint32_t> ids;
  tok->encode_ids("Hello, unaffable worlds! xyz", ids);
  // hello , un ##aff ##able world ##s ! [UNK]
  CHECK(ids == std::vector<uint32_t>{5, 12, 8, 9, 10, 6, 7, 11, 1});
  Encoding e = tok->encode("Café ab");
  CHECK(e.ids == std::vector<uint32_t>{15, 13, 14});
  // "Café" is 5 bytes: the accent is stripped but the offsets cover the original character.
  CHECK(e.offsets == std::vector<std::pair<uint32_t, uint32_t>>{{0, 5}, {6, 7}, {7, 8}});
  Encoding s = tok->post_process(e, tok->encode("hello"));
  CHECK(s.ids == std::vector<uint32_t>{2, 15, 13, 14, 3, 5, 3});
  CHECK(s.type_ids == std::vector<uint32_t>{0, 0, 0, 0, 0, 1, 1});
  CHECK(s.sequence_ids == std::vector<int8_t>{-1, 0, 0, 0, -1, 1, -1});
  CHECK(tok->added_tokens(false) == 2);
  CHECK(tok->added_tokens(true) == 3);
  CHECK(tok->decode(s.ids, true) == "cafe ab hello");
  CHECK(tok->special_tokens().cls == 2u);
  CHECK(tok->special_tokens().unk == 1u);
  CHECK(tok->is_special(3));
  CHECK_FALSE(tok->is_special(5));
  // Words longer than max_input_chars_per_word (100) are one unknown token.
  ids.clear();
  tok->encode_ids(std::string(101, 'a'), ids);
  CHECK(ids == std::vector<uint32_t>{1});
}

TEST_CASE("tokenizer.json and vocab.txt give the same ids") {
  TempDir dir("tok");
  auto a = load_text(dir, "vocab.txt", kVocab);
  auto b = load_text(dir, "tokenizer.json", wordpiece_json());
  for (const char* text : {"Hello, unaffable worlds!", "CAFÉ  a\tb\n", "中文 hello"}) {
    std::vector<uint32_t> x, y;
    a->encode_ids(text, x);
    b->encode_ids(text, y);
    CHECK(x == y);
  }
  CHECK(a->vocab_size() == 16);
  CHECK(b->describe().type == "wordpiece");
  CHECK(b->describe().vocab_size == 16);
  CHECK(a->describe().fingerprint.size() == 16);
  CHECK(a->describe().special == a->special_tokens());
}

TEST_CASE("invalid UTF-8 is an input error naming the byte offset") {
  TempDir dir("tok");
  auto tok = load_text(dir, "vocab.txt", kVocab);
  for (auto [text, offset] : std::vector<std::pair<std::string, int>>{{"abc\xff", 3},
                                                                      {"h\xc3", 1},
                                                                      {"ok \xed\xa0\x80", 3},
                                                                      {"\xc0\x80", 0},
                                                                      {"ab\xf4\x90\x80\x80", 2}}) {
    try {
      tok->encode(text);
      FAIL("accepted invalid UTF-8");
    } catch (const Error& e) {
      CHECK(e.code() == ErrorCode::kInput);
      CHECK_MESSAGE(
          std::string(e.what()).find("byte offset " + std::to_string(offset)) != std::string::npos,
          e.what());
    }
    std::vector<uint32_t> ids;
    CHECK_THROWS_AS(tok->encode_ids(text, ids), Error);
  }
}

TEST_CASE("a merge with a token missing from the vocabulary is an input error naming it") {
  // Byte-level BPE and BPE over characters: the first bad merge (rank 1) is named, whether one of
  // its sides or its merged token is missing. U+00AD is not one of byte-level BPE's stand-in
  // characters: a side made of it is missing there, while BPE over characters has the token
  // (and misses the merged one).
  const std::string byte_level =
      R"("pre_tokenizer":{"type":"ByteLevel","add_prefix_space":false,"use_regex":true})";
  const std::string characters = R"("pre_tokenizer":null)";
  const std::string soft_hyphen = "\u00ad";
  for (const std::string& pre : {byte_level, characters})
    for (const auto& [merges, why] :
         {std::pair<std::string, std::string>{R"(["a b","a x","c x"])", "uses a token missing"},
          {R"(["a b","b c","x y"])", "the merged token is missing"},
          {R"(["a b","a )" + soft_hyphen + R"(","c x"])",
           pre == byte_level ? "uses a token missing" : "the merged token is missing"}}) {
      TempDir dir("tok");
      const std::string json =
          R"({"added_tokens":[],"normalizer":null,"post_processor":null,"decoder":null,)" + pre +
          R"(,"model":{"type":"BPE","vocab":{"a":0,"b":1,"ab":2,"c":3,")" + soft_hyphen +
          R"(":4},"merges":)" + merges + "}}";
      try {
        load_text(dir, "tokenizer.json", json);
        FAIL("loaded " << json);
      } catch (const Error& e) {
        CHECK(e.code() == ErrorCode::kInput);
        const std::string what = e.what();
        CHECK_MESSAGE(what.find("BPE merge 1 '") != std::string::npos, what);
        CHECK_MESSAGE(what.find(why) != std::string::npos, what);
      }
    }
}

TEST_CASE("a normalized added token behind BertNormalizer matches the normalized text") {
  // Its content lowercased as the text is: "[MASK]" is "[mask]", found in any case, and the
  // text around it goes to WordPiece (bert_added_test checks such files against HF).
  TempDir dir("tok");
  auto tok =
      load_text(dir, "tokenizer.json",
                wordpiece_json("added_tokens", R"([{"id":4,"content":"[MASK]","normalized":true,)"
                                               R"("special":true}])"));
  for (const char* text : {"hello [MASK] world", "hello [mask] world", "HELLO[Mask]World"}) {
    CAPTURE(text);
    std::vector<uint32_t> ids;
    tok->encode_ids(text, ids);
    CHECK(ids == std::vector<uint32_t>{5, 4, 6});
    CHECK(tok->encode(text).ids == ids);
  }
  CHECK(tok->encode("Hello [MasK]s").offsets ==
        std::vector<std::pair<uint32_t, uint32_t>>{{0, 5}, {6, 12}, {12, 13}});
}

TEST_CASE("unsupported tokenizer.json content fails loudly, naming it") {
  expect_unsupported(wordpiece_json("normalizer", R"({"type":"NFKC"})"), "NFKC");
  expect_unsupported(wordpiece_json("pre_tokenizer", R"({"type":"Metaspace","replacement":"_"})"),
                     "Metaspace");
  expect_unsupported(wordpiece_json("decoder", R"({"type":"Metaspace"})"), "Metaspace");
  expect_unsupported(
      wordpiece_json("post_processor",
                     R"({"type":"RobertaProcessing","sep":["</s>",2],"cls":["<s>",0]})"),
      "RobertaProcessing");
  expect_unsupported(wordpiece_json("model", R"({"type":"Unigram","vocab":[]})"), "BertNormalizer");
  expect_unsupported(wordpiece_json("truncation", R"({"max_length":128})"), "truncation");
  auto bpe_json = [](const std::string& model, const std::string& normalizer = "null",
                     const std::string& added = "[]") {
    return R"({"added_tokens":)" + added + R"(,"normalizer":)" + normalizer +
           R"(,"post_processor":null,"decoder":null,)"
           R"("pre_tokenizer":{"type":"ByteLevel","add_prefix_space":false,"use_regex":true},)"
           R"("model":)" +
           model + "}";
  };
  const std::string ok_model = R"({"type":"BPE","vocab":{"a":0,"b":1,"ab":2},"merges":["a b"]})";
  {
    TempDir dir("tok");
    CHECK_NOTHROW(load_text(dir, "tokenizer.json", bpe_json(ok_model)));
  }
  expect_unsupported(bpe_json(R"({"type":"BPE","byte_fallback":true,"vocab":{"a":0},"merges":[]})"),
                     "byte_fallback");
  expect_unsupported(bpe_json(R"({"type":"BPE","dropout":0.1,"vocab":{"a":0},"merges":[]})"),
                     "dropout");
  expect_unsupported(
      bpe_json(R"({"type":"BPE","continuing_subword_prefix":"##","vocab":{"a":0},"merges":[]})"),
      "continuing_subword_prefix");
  {
    TempDir dir("tok");
    CHECK_NOTHROW(load_text(dir, "tokenizer.json", bpe_json(ok_model, R"({"type":"NFC"})")));
  }
  expect_unsupported(bpe_json(ok_model, R"({"type":"NFC"})",
                              R"([{"id":2,"content":"ab","normalized":true,"special":false}])"),
                     "normalized added tokens");
  expect_unsupported(bpe_json(ok_model, R"({"type":"Nmt"})"), "Nmt");
  std::string bpe_fixed_length =
      R"({"added_tokens":[],"normalizer":null,"post_processor":null,"decoder":null,
    "pre_tokenizer":{"type":"FixedLength","length":5},
    "model":{"type":"BPE","vocab":{"a":0},"merges":[]}})";
  expect_unsupported(bpe_fixed_length, "FixedLength");
  std::string unigram_byte_level =
      R"({"added_tokens":[],"normalizer":null,"post_processor":null,"pre_tokenizer":null,
    "decoder":{"type":"ByteLevel"},"model":{"type":"Unigram","unk_id":0,"vocab":[["<unk>",0.0]]}})";
  expect_unsupported(unigram_byte_level, "ByteLevel");
}

TEST_CASE("truncate_pair follows HF's longest_first table") {
  // tokenizers/src/utils/truncation.rs test table, max_length 7: (n1, n2) -> (n1', n2').
  struct Row {
    size_t a, b, ta, tb;
  };
  for (Row r : {Row{0, 0, 0, 0},
                {0, 2, 0, 2},
                {0, 4, 0, 4},
                {0, 8, 0, 7},
                {2, 0, 2, 0},
                {2, 2, 2, 2},
                {2, 4, 2, 4},
                {2, 8, 2, 5},
                {4, 0, 4, 0},
                {4, 2, 4, 2},
                {4, 4, 3, 4},
                {4, 8, 3, 4},
                {8, 0, 7, 0},
                {8, 2, 5, 2},
                {8, 4, 4, 3},
                {8, 8, 3, 4}}) {
    Encoding a, b;
    a.ids.assign(r.a, 1);
    b.ids.assign(r.b, 2);
    tok::truncate_pair(a, b, 7, tok::TruncationStrategy::kLongestFirst);
    CHECK_MESSAGE(a.size() == r.ta, r.a << "," << r.b);
    CHECK_MESSAGE(b.size() == r.tb, r.a << "," << r.b);
  }
  Encoding a, b;
  a.ids.assign(5, 1);
  b.ids.assign(5, 2);
  tok::truncate_pair(a, b, 7, tok::TruncationStrategy::kOnlySecond);
  CHECK(a.size() == 5);
  CHECK(b.size() == 2);
  a.ids.assign(9, 1);
  b.ids.assign(2, 2);
  CHECK_THROWS_AS(tok::truncate_pair(a, b, 7, tok::TruncationStrategy::kOnlySecond), Error);
}

TEST_CASE("concurrent const calls give the single-thread answer") {
  TempDir dir("tok");
  const std::string bpe = R"({"added_tokens":[{"id":6,"content":"<|x|>","special":true}],
    "normalizer":null,"post_processor":null,"decoder":{"type":"ByteLevel"},
    "pre_tokenizer":{"type":"ByteLevel","add_prefix_space":false,"use_regex":true},
    "model":{"type":"BPE","vocab":{"a":0,"b":1,"Ġ":2,"ab":3,"Ġa":4,"Ġab":5},"merges":["a b","Ġ a","Ġa b"]}})";
  auto tok = load_text(dir, "tokenizer.json", bpe);
  // The same model behind an Oniguruma Split regex: regex searches run concurrently too.
  std::string split = bpe;
  split.replace(
      split.find(
          R"("pre_tokenizer":{"type":"ByteLevel","add_prefix_space":false,"use_regex":true})"),
      std::string(
          R"("pre_tokenizer":{"type":"ByteLevel","add_prefix_space":false,"use_regex":true})")
          .size(),
      R"("pre_tokenizer":{"type":"Sequence","pretokenizers":[{"type":"Split","pattern":{"Regex":" ?\\p{L}+|\\s+"},"behavior":"Isolated","invert":false},{"type":"ByteLevel","add_prefix_space":false,"use_regex":false}]})");
  auto regex_tok = load_text(dir, "split.json", split);
  std::vector<uint32_t> ids;
  tok->encode_ids("ab ab<|x|>a", ids);
  // "a b" has the lowest rank, so " ab" becomes Ġ + ab before "Ġ a" can apply.
  CHECK(ids == std::vector<uint32_t>{3, 2, 3, 6, 0});
  CHECK(tok->decode(ids, true) == "ab aba");
  std::vector<std::string> texts;
  for (int i = 0; i < 200; ++i)
    texts.push_back(std::string(i % 7, 'a') + " ab" + std::string(i % 5, 'b'));
  std::vector<std::vector<uint32_t>> want, want_regex;
  for (auto& t : texts) {
    want.emplace_back();
    tok->encode_ids(t, want.back());
    want_regex.emplace_back();
    regex_tok->encode_ids(t, want_regex.back());
  }
  CHECK(want == want_regex);
  std::vector<std::thread> threads;
  std::atomic<int> bad{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int rep = 0; rep < 50; ++rep)
        for (size_t i = 0; i < texts.size(); ++i) {
          std::vector<uint32_t> got, got_regex;
          tok->encode_ids(texts[i], got);
          regex_tok->encode_ids(texts[i], got_regex);
          if (got != want[i] || got_regex != want_regex[i]) ++bad;
        }
    });
  }
  for (auto& th : threads) th.join();
  CHECK(bad == 0);
}

TEST_CASE("hand-written Split patterns end every match where Oniguruma does") {
  // Each hand matcher against the pattern it stands for, at every character of: the fixture
  // lines; every string of three characters drawn from one or two of each class the patterns
  // tell apart (upper-, title-, lower- and caseless letters, the three kinds of mark, numbers,
  // white space, CR/LF, punctuation and symbols in and out of ASCII (the wide punctuation that
  // the windows class as symbols, U+2010-U+2027, its ends, and its neighbours U+200F and the
  // line separator U+2028, which is white space), CJK at and past DeepSeek's
  // range ends, apostrophes and contraction letters); and seeded random strings of up to 16 of
  // them. Where Oniguruma's first match from a position starts later, ours says kNoMatch.
  const std::vector<std::string> alphabet = {
      "A",      "\u01C5", "\u03A3",     "a",      "\u00E9", "\u00DF", "\u02B0", "\u4E2D",
      "\u9FA5", "\u9FA6", "\u30FF",     "\u3100", "\u3042", "\u30FC", "\u0E01", "\u0301",
      "\u0903", "\u20DD", "7",          "\u0663", "\u216B", "\u00BD", " ",      "\t",
      "\u00A0", "\r",     "\n",         ".",      "/",      "$",      "^",      "\u00A9",
      "\u2014", "\u20AC", "\U0001F600", "\x01",   "\u200B", "'",      "s",      "S",
      "\u017F", "l",      "L",          "r",      "e",      "v",      "d",      "t",
      "M",      "\u2019", "\u201C",     "\u2010", "\u2027", "\u2028", "\u200F"};
  std::vector<std::string> texts;
  const auto data = std::filesystem::path(SHARDKIT_SOURCE_DIR) / "tests" / "data";
  for (const auto& dir : {data / "tokenizer", data / "tokenizer_scripts"})
    for (const auto& entry : std::filesystem::directory_iterator(dir))
      if (entry.path().extension() == ".txt") {
        std::string all = read_file(entry.path());
        for (size_t at = 0, nl; at < all.size(); at = nl + 1) {
          nl = all.find('\n', at);
          if (nl == std::string::npos) nl = all.size();
          texts.push_back(all.substr(at, nl - at) + "\n");
        }
      }
  for (const auto& a : alphabet)
    for (const auto& b : alphabet)
      for (const auto& c : alphabet) texts.push_back(a + b + c);
  std::mt19937 random(7);
  for (int k = 0; k < 20000; ++k) {
    texts.push_back(random_join(alphabet, 1, 16, random));
  }
  // Longer seeded strings of mostly ASCII, so that windows of masks hold many pieces, and
  // contractions, white space runs and non-ASCII bytes fall at every offset in them.
  const std::vector<std::string> mostly_ascii = {
      "a",  "b",      "s",      "t",      "r",      "e",      "v",      "l",      "d",      "m",
      "Z",  "S",      "E",      "L",      "7",      " ",      " ",      " ",      "  ",     "\t",
      "\n", "\r",     ".",      ",",      "'",      "'",      "\u00E9", "\u00A0", "\u4E2D", "\x01",
      "/",  "\u2019", "\u201C", "\u2014", "\u2026", "\u2028", "\u2030"};
  // The windows take starts only 16 bytes or more before a non-ASCII byte: half of the strings
  // draw a non-ASCII part a tenth as often. Letters that (?i) folds to s follow a contraction.
  for (int k = 0; k < 3000; ++k) {
    std::string t;
    for (int len = 40 + static_cast<int>(random() % 160); len > 0; --len) {
      std::string part = mostly_ascii[random() % mostly_ascii.size()];
      if (k % 2 && static_cast<unsigned char>(part[0]) >= 0x80 && random() % 10)
        part = mostly_ascii[random() % 10];
      t += part;
    }
    texts.push_back(t);
  }
  // English punctuation: the wide punctuation is the only non-ASCII, so the windows' starts go
  // on past it, and it falls before and after letters, spaces, newlines and other symbols.
  const std::vector<std::string> english = {
      "a", "b",      "s",      "t",      "T",      "E",      "e",      "l",
      "d", "7",      " ",      " ",      "\n",     ".",      ",",      "'",
      "(", "\u2019", "\u201C", "\u201D", "\u2014", "\u2026", "\u2010", "\u2027"};
  for (int k = 0; k < 2000; ++k) texts.push_back(random_join(english, 40, 160, random));
  for (const char* tail : {"A'\u017F", "a'\u017Fx", "A'L\u017F", "it'\u212A", "don't\u00E9"})
    texts.push_back("seventeen letters" + std::string(tail));
  // White space after a newline whose run goes on past a window's 64 bytes, or through a
  // non-ASCII space, before another newline (`\s*[\r\n]+` takes it all) or not.
  for (const char* tail : {"\n", "b", "\u00A0\n", "\u00A0b"})
    for (size_t n : {1, 40, 61, 62, 63, 70})
      for (const char* head : {"a\n", "a \n", "a.\n"})
        texts.push_back(head + std::string(n, ' ') + tail);
  // Long runs of each class too, so that the vectorized forms meet pieces longer than their
  // 64-byte masks and pieces that start anywhere in them.
  for (const char* run : {"a", "Z", "7", " ", "\n", ".", "\u00E9", "\u00A0"})
    for (size_t n : {30, 63, 64, 65, 70, 130}) {
      std::string t;
      for (size_t k = 0; k < n; ++k) t += run;
      texts.push_back(t + "x " + t + "!\n" + t);
    }
  for (const auto& [name, pattern, matcher] :
       {std::tuple<const char*, const char*, tok::SplitMatcher>{"gpt2", tok::kGpt2Pattern,
                                                                tok::gpt2_match},
        {"cl100k", tok::kCl100kPattern, tok::cl100k_match},
        {"qwen", tok::kQwenPattern, tok::qwen_match},
        {"o200k", tok::kO200kPattern, tok::o200k_match},
        {"tekken", tok::kTekkenPattern, tok::tekken_match},
        {"deepseek digits", tok::kDeepSeekDigitsPattern, tok::deepseek_digits_match},
        {"deepseek cjk", tok::kDeepSeekCjkPattern, tok::deepseek_cjk_match},
        {"deepseek words", tok::kDeepSeekWordsPattern, tok::deepseek_words_match},
        {"gpt2 vectorized", tok::kGpt2Pattern, vectorized<tok::PiecePattern::kGpt2>},
        {"cl100k vectorized", tok::kCl100kPattern, vectorized<tok::PiecePattern::kCl100k>},
        {"qwen vectorized", tok::kQwenPattern, vectorized<tok::PiecePattern::kQwen>},
        {"o200k vectorized", tok::kO200kPattern, vectorized<tok::PiecePattern::kO200k>},
        {"tekken vectorized", tok::kTekkenPattern, vectorized<tok::PiecePattern::kTekken>}}) {
    const bool hand = std::string_view(name).find("vectorized") == std::string_view::npos;
    if (hand) CHECK_MESSAGE(bool(tok::hand_matcher(pattern) == matcher), name);
    const tok::Regex regex(pattern);
    size_t positions = 0, differ = 0;
    for (const std::string& t : texts)
      for (size_t pos = 0; pos < t.size(); ++pos) {
        if ((static_cast<unsigned char>(t[pos]) & 0xC0) == 0x80) continue;
        size_t begin = 0, end = 0;
        const bool here = regex.search(t, pos, t.size(), &begin, &end) && begin == pos;
        const size_t ours = matcher(t, pos);
        ++positions;
        if (ours != (here ? end : tok::kNoMatch) && ++differ <= 5)
          MESSAGE(std::string(name) << " at byte " << pos << " of '" << t << "': Oniguruma "
                                    << (here ? std::to_string(end) : "no match") << ", ours "
                                    << (ours == tok::kNoMatch ? "no match" : std::to_string(ours)));
      }
    MESSAGE(std::string(name) << ": " << positions - differ << "/" << positions
                              << " positions agree");
    CHECK(differ == 0);
    // The vectorized scanner walks a text piece by piece, reusing its masks: the same pieces
    // as the hand matcher's, whatever offset into its masks a piece starts at.
    if (const auto vector = tok::piece_pattern(matcher); hand && vector) {
      using P = tok::PiecePattern;
      const auto [walks, walks_differ] = *vector == P::kGpt2     ? walk<P::kGpt2>(texts, matcher)
                                         : *vector == P::kCl100k ? walk<P::kCl100k>(texts, matcher)
                                         : *vector == P::kQwen   ? walk<P::kQwen>(texts, matcher)
                                         : *vector == P::kO200k  ? walk<P::kO200k>(texts, matcher)
                                                                 : walk<P::kTekken>(texts, matcher);
      MESSAGE(std::string(name) << ": the scanner's walk agrees over " << walks << " pieces");
      CHECK(walks_differ == 0);
    }
  }
}

TEST_CASE("SentencePiece's spaced ASCII goes over 16 bytes at a time as the byte loop says") {
  // Clean text: the copy is the text with each space as U+2581, up to the last whole block
  // that has a byte after it.
  std::string clean;
  for (int k = 0; clean.size() < 200; ++k) clean += (k % 3 ? "word" : "x") + std::string(" ");
  clean.resize(200);
  std::string expected;
  for (char c : clean.substr(0, 192)) expected += c == ' ' ? "\xE2\x96\x81" : std::string(1, c);
  const auto* p = reinterpret_cast<const unsigned char*>(clean.data());
  std::vector<char> out(2 * clean.size() + tok::kEscapeSlack);
  size_t written = 0;
  CHECK(tok::escape_spaced_ascii_reference(p, clean.size(), clean.size(), out.data(), &written) ==
        192);
  CHECK(std::string(out.data(), written) == expected);
  const bool vectorized =
      tok::escape_spaced_ascii(p, clean.size(), clean.size(), out.data(), &written) != 0;
  MESSAGE("spaced ASCII escaped 16 bytes at a time: " << vectorized);
  if (!vectorized) return;  // the normalizer's general path runs instead
  CHECK(std::string(out.data(), written) == expected);
  // Random text, mostly clean: two spaces, controls, DEL and bytes from 0x80 stop both at the
  // same block, at every position in it and just after it, and under every limit.
  std::mt19937 random(11);
  const std::string rare = "  \x1F\x7F\x80\xE2\t";
  size_t differ = 0, stops = 0;
  for (int k = 0; k < 20000; ++k) {
    std::string t(random() % 90, 'a');
    for (char& c : t) c = static_cast<char>(' ' + random() % 95);
    for (int bad = static_cast<int>(random() % 3); bad > 0 && !t.empty(); --bad)
      t[random() % t.size()] = rare[random() % rare.size()];
    const size_t most = random() % 2 ? t.size() : random() % 64;
    const auto* q = reinterpret_cast<const unsigned char*>(t.data());
    std::vector<char> a(2 * most + tok::kEscapeSlack), b(a.size());
    size_t wa = 0, wb = 0;
    const size_t na = tok::escape_spaced_ascii(q, t.size(), most, a.data(), &wa);
    const size_t nb = tok::escape_spaced_ascii_reference(q, t.size(), most, b.data(), &wb);
    differ += na != nb || std::string(a.data(), wa) != std::string(b.data(), wb);
    stops += nb + 17 <= t.size() && nb + 16 <= most;
  }
  CHECK(differ == 0);
  CHECK(stops > 1000);  // the draws stop early often enough to test the stops
}

TEST_CASE("A byte replaced 16 bytes at a time: every content length, runs of the byte") {
  std::mt19937 random(12);
  size_t differ = 0, blocks = 0;
  for (int k = 0; k < 20000; ++k) {
    const std::string content = std::string("\xE2\x96\x81!").substr(0, 1 + k % 4);
    std::string t(random() % 70, 'a');
    for (char& c : t) c = random() % 3 ? static_cast<char>(' ' + random() % 95) : ' ';
    std::vector<char> out(4 * t.size() + tok::kEscapeSlack);
    size_t written = 0;
    const size_t done =
        tok::replace_byte_blocks(t.data(), t.size(), ' ', content, out.data(), &written);
    std::string expected;
    for (char c : t.substr(0, done)) expected += c == ' ' ? content : std::string(1, c);
    differ +=
        std::string(out.data(), written) != expected || (done != 0 && done != t.size() / 16 * 16);
    blocks += done / 16;
  }
  CHECK(differ == 0);
  MESSAGE("byte replaced 16 at a time over " << blocks << " blocks");
}

TEST_CASE("vectorized ASCII class masks equal the byte-by-byte ones") {
  std::mt19937 random(3);
  std::string block(64, ' ');
  MESSAGE("ASCII masks: " << std::string(tok::ascii_masks_implementation()));
  for (const tok::AsciiMasksImplementation& implementation : tok::ascii_masks_implementations()) {
    CAPTURE(std::string(implementation.name));
    size_t differ = 0;
    for (int k = 0; k < 4000; ++k) {
      for (auto& c : block)
        c = static_cast<char>(k < 4 ? (k * 64 + (&c - block.data())) : random());
      for (size_t n = 0; n <= 64; n += (k < 4 ? 1 : 13)) {
        const tok::AsciiMasks a = implementation.masks(block.data(), n);
        const tok::AsciiMasks b = tok::ascii_masks_reference(block.data(), n);
        differ += a.upper != b.upper || a.lower != b.lower || a.digit != b.digit ||
                  a.space != b.space || a.high != b.high || a.valid != b.valid ||
                  a.newline != b.newline || a.slash != b.slash || a.blank != b.blank ||
                  a.quote != b.quote || a.control != b.control;
      }
    }
    CHECK(differ == 0);
  }
  // The reference's white space is the matchers' ASCII White_Space.
  for (int c = 0; c < 128; ++c) {
    const char ch = static_cast<char>(c);
    const bool space = tok::ascii_masks_reference(&ch, 1).space != 0;
    CHECK_MESSAGE(space == tok::is_white_space(static_cast<char32_t>(c)), c);
  }
  // find_first_of_bytes: every set size up to 8, hits at every offset and none.
  for (size_t count = 1; count <= 8; ++count) {
    const unsigned char set[8] = {'<', '[', '\n', '\t', 0xE2, 'x', 0x00, 0xFF};
    for (size_t at = 0; at <= 100; ++at) {
      std::string t(100, 'a');
      if (at < t.size()) t[at] = static_cast<char>(set[count - 1]);
      CHECK(tok::find_first_of_bytes(t.data(), t.size(), set, count) == at);
    }
  }
}

TEST_CASE("tables restored from a blob are views of it; copies and moves keep their contents") {
  tok::StringList words;
  tok::StringIdMap ids;
  tok::U64Map pairs;
  // Short strings (kept inside a std::string, which a move copies) and long ones.
  const std::vector<std::string> keys = {"a", "bc", "a much longer key than a short string holds"};
  for (size_t i = 0; i < keys.size(); ++i) {
    words.push_back(keys[i]);
    ids.set(keys[i], static_cast<uint32_t>(i));
    pairs.insert(i, 10 * i);
  }
  std::string blob;
  tok::BlobWriter w(blob);
  w.value<uint8_t>(7);  // the arrays after it are still aligned
  words.save(w);
  ids.save(w);
  pairs.save(w);
  const auto check = [&](const tok::StringList& l, const tok::StringIdMap& m,
                         const tok::U64Map& u) {
    REQUIRE(l.size() == keys.size());
    for (size_t i = 0; i < keys.size(); ++i) {
      CHECK(l[i] == keys[i]);
      CHECK(m.find(keys[i]) == i);
      CHECK(u.find(i) == 10 * i);
    }
    CHECK(m.find("absent") == tok::StringIdMap::kNone);
  };
  // A copy of a built table owns its contents: it outlives the original.
  auto built = std::make_unique<tok::StringList>(words);
  auto built_ids = std::make_unique<tok::StringIdMap>(ids);
  tok::StringList moved = std::move(words);
  check(*built, *built_ids, pairs);
  check(moved, ids, pairs);

  // In an 8-aligned buffer, as a compiled form is read: the restored tables point into it.
  std::vector<uint64_t> aligned(blob.size() / 8 + 1);
  std::memcpy(aligned.data(), blob.data(), blob.size());
  const std::string_view bytes(reinterpret_cast<const char*>(aligned.data()), blob.size());
  tok::BlobReader r(bytes);
  CHECK(r.value<uint8_t>() == 7);
  tok::StringList l;
  tok::StringIdMap m;
  tok::U64Map u;
  REQUIRE(l.load(r));
  REQUIRE(m.load(r));
  REQUIRE(u.load(r));
  CHECK(r.at_end());
  check(l, m, u);
  const auto inside = [&](std::string_view s) {
    return s.data() >= bytes.data() && s.data() + s.size() <= bytes.data() + bytes.size();
  };
  CHECK(inside(l[2]));
  // A change to a view copies it out first; the blob stays as it was.
  const std::string before(bytes);
  m.set("new", 9);
  u.insert(100, 1);
  CHECK(m.find("new") == 9);
  CHECK(m.find(keys[2]) == 2);
  CHECK(u.find(100) == 1);
  CHECK(std::string(bytes) == before);

  // Misaligned, the arrays are refused rather than read unaligned.
  std::string shifted = " " + blob;
  tok::BlobReader bad(std::string_view(shifted).substr(1));
  bad.value<uint8_t>();
  tok::StringList refused;
  CHECK_FALSE(refused.load(bad));
  CHECK_FALSE(bad.ok());
}

TEST_CASE("two characters join only where a token holds them side by side") {
  // "中" and "国" are tokens and "中国" is one; "国中" is none; "x" is no token of its own (byte
  // fallback), and "ab" holds an ASCII pair.
  const tok::StringList tokens(
      std::vector<std::string>{"", "a", "b", "c", "ab", "中", "国", "中国", "▁", "▁中", "c中"});
  tok::JoinedCharPairs pairs;
  pairs.build(tokens, tok::JoinedCharPairs::Symbols::kCharacters);
  const auto joins = [](const tok::JoinedCharPairs& p, std::string_view a, std::string_view b) {
    size_t i = 0, j = 0;
    return p.joins(tok::decode_utf8(a, i), tok::decode_utf8(b, j));
  };
  // (a, b, whether they join). "国中", "中中" and "a中" are held by no token, and collide with
  // none of these few pairs in 4,096 bits. A character that is no token of its own ("x", "文")
  // joins everything, ASCII or not.
  const std::vector<std::tuple<std::string, std::string, bool>> expected = {
      {"中", "国", true}, {"▁", "中", true}, {"c", "中", true},   {"a", "b", true},
      {"b", "a", false},  {"a", "c", false}, {"国", "中", false}, {"中", "中", false},
      {"a", "中", false}, {"x", "a", true},  {"a", "x", true},    {"中", "文", true},
      {"文", "a", true}};
  const auto check = [&](const tok::JoinedCharPairs& p) {
    for (const auto& [a, b, join] : expected) {
      CAPTURE(a);
      CAPTURE(b);
      CHECK(joins(p, a, b) == join);
    }
  };
  check(pairs);

  std::string blob;
  tok::BlobWriter w(blob);
  pairs.save(w);
  std::vector<uint64_t> aligned(blob.size() / 8 + 1);
  std::memcpy(aligned.data(), blob.data(), blob.size());
  const std::string_view bytes(reinterpret_cast<const char*>(aligned.data()), blob.size());
  tok::BlobReader r(bytes);
  tok::JoinedCharPairs restored;
  REQUIRE(restored.restore(r));
  CHECK(r.at_end());
  check(restored);

  // A form whose pair table does not have the size its bit count says is refused, not indexed
  // out of bounds. The count sits after the kind of symbols and the two pair tables' bytes.
  std::string damaged = blob;
  damaged[1 + 128 * 128 / 8 + 256 * 256 / 8] = 20;
  std::memcpy(aligned.data(), damaged.data(), damaged.size());
  tok::BlobReader bad(bytes);
  tok::JoinedCharPairs refused;
  CHECK_FALSE(refused.restore(bad));
}

TEST_CASE("byte-level tokens that hold part of a character join by the bytes either side") {
  // 中 = E4 B8 AD, 文 = E6 96 87, 国 = E5 9B BD, 人 = E4 BA BA. A token of 中 and the first byte
  // of 文 joins 中 to any character that starts with E6; one of the last byte of 人 and 国 whole
  // joins any character that ends with BA to 国.
  const tok::StringList tokens(std::vector<std::string>{"a", "\xE4\xB8\xAD\xE6", "\xBA\xE5\x9B\xBD",
                                                        "\xE4\xB8\xAD\xE4\xBA\xBA", "ab"});
  tok::JoinedCharPairs pairs;
  pairs.build(tokens, tok::JoinedCharPairs::Symbols::kBytes);
  const auto joins = [&](std::string_view a, std::string_view b) {
    size_t i = 0, j = 0;
    return pairs.joins(tok::decode_utf8(a, i), tok::decode_utf8(b, j));
  };
  CHECK(joins("中", "文"));
  CHECK(joins("中", "\xE6\x97\xA5"));  // 日 starts with E6 too
  CHECK(joins("人", "国"));
  CHECK(joins("中", "人"));  // both whole in a token
  CHECK(joins("a", "b"));
  CHECK_FALSE(joins("中", "国"));
  CHECK_FALSE(joins("人", "中"));
  CHECK_FALSE(joins("国", "文"));
  // Every character is made of byte symbols: one no token names whole still cuts.
  CHECK_FALSE(joins("\xE6\x97\xA5", "a"));
  CHECK_FALSE(joins("b", "a"));
}

TEST_CASE("a directory or a device named as the tokenizer is refused by name") {
  TempDir tmp("tokenizer-not-a-file");
  for (const std::string& path : {tmp.path().string(), std::string("/dev/null")}) {
    CAPTURE(path);
    try {
      Tokenizer::from_file(path);
      FAIL("loaded");
    } catch (const Error& e) {
      CHECK(e.code() == ErrorCode::kInvalidArgument);
      CHECK(e.file() == path);
      CHECK(e.reason().find("not a tokenizer file") != std::string::npos);
    }
  }
}

TEST_CASE("a .json file that is not a JSON object is refused as such, not read as a vocab.txt") {
  TempDir tmp("tokenizer-json-text");
  for (const char* name : {"tokenizer.json", "VOCAB.JSON"}) {
    const std::filesystem::path path = tmp / name;
    write_file(path, "hello\nworld\n");
    CAPTURE(name);
    try {
      Tokenizer::from_file(path);
      FAIL("loaded");
    } catch (const Error& e) {
      CHECK(e.code() == ErrorCode::kInput);
      CHECK(e.reason().find("a .json tokenizer is a JSON object") != std::string::npos);
    }
  }
  // The same lines named vocab.txt are a WordPiece vocabulary (lacking [UNK], refused so).
  write_file(tmp / "vocab.txt", "hello\nworld\n");
  CHECK_THROWS_WITH_AS(Tokenizer::from_file(tmp / "vocab.txt"), doctest::Contains("[UNK]"), Error);
}

TEST_CASE("a tokenizer's companion file is named for what it is, not read as another kind") {
  TempDir tmp("tokenizer-companions");
  auto refused_with = [](const std::filesystem::path& path, const std::string& words) {
    CAPTURE(path);
    try {
      Tokenizer::from_file(path);
      FAIL("loaded");
    } catch (const Error& e) {
      CHECK(e.code() == ErrorCode::kInput);
      CHECK_MESSAGE(e.reason().find(words) != std::string::npos, e.reason());
    }
  };
  // GPT-2's vocab.bpe, with and without its version line: merges, not a WordPiece vocabulary.
  write_file(tmp / "vocab.bpe", "#version: 0.2\nĠ t\nĠ a\nh e\ni n\n");
  refused_with(tmp / "vocab.bpe", "not a tokenizer but BPE merges");
  write_file(tmp / "merges.txt", "Ġ t\nĠ a\nh e\ni n\nr e\n");
  refused_with(tmp / "merges.txt", "not a tokenizer but BPE merges");
  // A tokenizer_config.json beside a vocab.bpe: not an encoder.json missing its merges.
  write_file(tmp / "tokenizer_config.json", "{\"add_bos_token\": false, \"model_max_length\": 8}");
  refused_with(tmp / "tokenizer_config.json", "pass the tokenizer.json beside it");
  // A vocab.txt whose tokens hold no space still loads (it has [UNK]).
  write_file(tmp / "vocab.txt", "[PAD]\n[UNK]\nhello\n##s\n");
  CHECK(Tokenizer::from_file(tmp / "vocab.txt") != nullptr);
}
