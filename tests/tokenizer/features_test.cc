// Documented tokenizer.json features that no stock tokenizer file exercises (issue 28, item 20),
// each in a tokenizer.json written here and checked line by line against HF tokenizers (ids,
// encode_ids, offsets, specials, decode; parity_check.h) on the fixture text plus lines aimed at
// the feature: added tokens with single_word; character BPE with continuing_subword_prefix, and
// with end_of_word_suffix and the BPEDecoder; Metaspace with prepend_scheme "never" and the
// legacy add_prefix_space. And the refusals the README lists for SentencePiece .model files (WORD
// and CHAR models, treat_whitespace_as_suffix), on files SentencePiece itself encodes.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <set>
#include <tuple>

#include "core/error.h"
#include "parity_check.h"

namespace shardkit::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::ordered_json;

// Words the models below merge whole; everything else falls apart into characters (or [UNK]).
const std::vector<std::string> kWords = {"the", "hello", "world", "data", "token",
                                         "ab",  "shard", "model", "of",   "and"};

// Lines aimed at the features: word boundaries around "ab" (single_word), words that merge,
// leading, trailing and repeated spaces (Metaspace), punctuation, digits, non-ASCII letters.
const char* const kFeatureLines =
    "ab\n"
    "ab ab\n"
    "xab abx xabx ab\n"
    "(ab) [ab] ab. ab, ab!\n"
    "ab_ab ab-ab 1ab ab1\n"
    "éab abé ab\tab\n"
    "hello world the data token\n"
    "  hello   world  \n"
    " the\n"
    "shard model of and the ab\n"
    "theworld helloab abhello\n"
    "<x> a<x>b <x><x> x <x>\n"
    "▁the ▁▁hello\n"
    "xyzzy qx(yz) taxyq the.xq,z\n";

fs::path feature_input(const fs::path& dir) {
  std::vector<std::string> fixture;
  fixture_text(&fixture);
  std::string all;
  for (const std::string& l : fixture) all += l + "\n";
  all += kFeatureLines;
  const fs::path p = dir / "input.txt";
  write_file(p, all);
  return p;
}

// Character BPE over printable ASCII, "▁" and a few accented letters, with each of kWords
// merged left to right. `prefix` marks non-initial pieces (continuing_subword_prefix), `suffix`
// the last piece of a word (end_of_word_suffix), `marker` starts every word (Metaspace's "▁").
ordered_json char_bpe(const std::string& prefix, const std::string& suffix,
                      const std::string& marker) {
  ordered_json vocab = ordered_json::object();
  auto add = [&](const std::string& t) {
    if (!vocab.contains(t)) vocab[t] = vocab.size();
  };
  add("[UNK]");
  std::vector<std::string> chars = {"▁", "é", "è", "ü"};
  for (char c = 33; c < 127; ++c) chars.emplace_back(1, c);
  for (const std::string& c : chars) {
    add(c);
    if (!prefix.empty()) add(prefix + c);
    if (!suffix.empty()) add(c + suffix);
  }
  ordered_json merges = ordered_json::array();
  std::set<std::pair<std::string, std::string>> merged;
  for (const std::string& bare : kWords) {
    const std::string word = marker + bare;
    // Pieces as the model sees the word: marker and letters; prefix on all but the first, the
    // suffix on the last.
    std::vector<std::string> pieces;
    for (size_t i = 0; i < word.size();) {
      const size_t n = (static_cast<unsigned char>(word[i]) >= 0xE0) ? 3 : 1;
      pieces.push_back(word.substr(i, n));
      i += n;
    }
    for (size_t i = 1; i < pieces.size(); ++i) pieces[i] = prefix + pieces[i];
    pieces.back() += suffix;
    std::string left = pieces[0];
    for (size_t i = 1; i < pieces.size(); ++i) {
      if (merged.insert({left, pieces[i]}).second) merges.push_back({left, pieces[i]});
      const std::string right = pieces[i].substr(prefix.size());
      left += right;
      add(left);
    }
  }
  ordered_json model = {
      {"type", "BPE"},
      {"dropout", nullptr},
      {"unk_token", "[UNK]"},
      {"continuing_subword_prefix", prefix.empty() ? ordered_json() : ordered_json(prefix)},
      {"end_of_word_suffix", suffix.empty() ? ordered_json() : ordered_json(suffix)},
      {"fuse_unk", false},
      {"byte_fallback", false},
      {"ignore_merges", false},
      {"vocab", vocab},
      {"merges", merges}};
  return model;
}

ordered_json tokenizer_json(ordered_json model, ordered_json pre_tokenizer, ordered_json decoder,
                            ordered_json added = ordered_json::array()) {
  return {{"version", "1.0"},          {"truncation", nullptr}, {"padding", nullptr},
          {"added_tokens", added},     {"normalizer", nullptr}, {"pre_tokenizer", pre_tokenizer},
          {"post_processor", nullptr}, {"decoder", decoder},    {"model", model}};
}

ordered_json added_token(uint32_t id, const std::string& content, bool single_word, bool special) {
  return {{"id", id},        {"content", content},  {"single_word", single_word}, {"lstrip", false},
          {"rstrip", false}, {"normalized", false}, {"special", special}};
}

void check_file(const std::string& name, const ordered_json& json) {
  TempDir dir("features");
  const fs::path file = dir / (name + ".json");
  write_file(file, json.dump());
  check_full(Case{name, file, {}, file, feature_input(dir.path())});
}

}  // namespace

TEST_CASE("added tokens with single_word match only as whole words, as HF's") {
  ordered_json model = char_bpe("##", "", "");
  // Ids as HF assigns them when it loads added tokens (it ignores the file's): the model's id of
  // a token it has ("ab" is a merged word), else the next one after the vocabulary.
  uint32_t next = static_cast<uint32_t>(model["vocab"].size());
  ordered_json added = ordered_json::array();
  for (const auto& [content, single_word, special] :
       std::vector<std::tuple<std::string, bool, bool>>{
           {"ab", true, false}, {"<x>", true, true}, {"xab", false, false}}) {
    const uint32_t id =
        model["vocab"].contains(content) ? model["vocab"][content].get<uint32_t>() : next++;
    added.push_back(added_token(id, content, single_word, special));
  }
  check_file("single_word",
             tokenizer_json(model, {{"type", "BertPreTokenizer"}},
                            {{"type", "WordPiece"}, {"prefix", "##"}, {"cleanup", true}}, added));
}

TEST_CASE("character BPE with continuing_subword_prefix, as HF's") {
  check_file("bpe_prefix",
             tokenizer_json(char_bpe("##", "", ""), {{"type", "Whitespace"}},
                            {{"type", "WordPiece"}, {"prefix", "##"}, {"cleanup", false}}));
}

TEST_CASE("character BPE with end_of_word_suffix and the BPEDecoder, as HF's") {
  check_file("bpe_suffix", tokenizer_json(char_bpe("", "</w>", ""), {{"type", "WhitespaceSplit"}},
                                          {{"type", "BPEDecoder"}, {"suffix", "</w>"}}));
}

TEST_CASE("Metaspace with prepend_scheme never, first and always, as HF's") {
  // A first merge across words ("b" with the next word's "▁") shows where the pieces are cut:
  // it applies only where Metaspace leaves a word's end and the next word's start in one piece.
  ordered_json model = char_bpe("", "", "▁");
  model["vocab"]["b▁"] = model["vocab"].size();
  model["merges"].insert(model["merges"].begin(), ordered_json::array({"b", "▁"}));
  for (const char* scheme : {"never", "first", "always"}) {
    CAPTURE(scheme);
    const ordered_json meta = {
        {"type", "Metaspace"}, {"replacement", "▁"}, {"prepend_scheme", scheme}, {"split", true}};
    check_file(std::string("metaspace_") + scheme, tokenizer_json(model, meta, meta));
  }
}

TEST_CASE("Metaspace in the legacy form with add_prefix_space, as HF reads it") {
  // Without prepend_scheme (files written before it existed) add_prefix_space decides; HF
  // refuses add_prefix_space false beside a scheme that prepends, so false goes with "never".
  const ordered_json old_form = {
      {"type", "Metaspace"}, {"replacement", "▁"}, {"add_prefix_space", true}};
  check_file("metaspace_legacy_prefix", tokenizer_json(char_bpe("", "", "▁"), old_form, old_form));
  const ordered_json no_prefix = {{"type", "Metaspace"},
                                  {"replacement", "▁"},
                                  {"add_prefix_space", false},
                                  {"prepend_scheme", "never"}};
  check_file("metaspace_legacy_no_prefix",
             tokenizer_json(char_bpe("", "", "▁"), no_prefix, no_prefix));
}

TEST_CASE("character BPE with fuse_unk and characters missing from the vocabulary, as HF's") {
  // A line is one word, merged a part at a time where no token joins two ASCII characters; an
  // unknown character joins no token, yet a run of them is one fused [UNK], so no part may end
  // between two of them.
  ordered_json model = char_bpe("", "", "▁");
  ordered_json vocab = ordered_json::object();
  for (const auto& [token, id] : model["vocab"].items())
    if (std::string("xyzq(").find(token) == std::string::npos || token.size() != 1)
      vocab[token] = vocab.size();
  model["vocab"] = vocab;
  model["fuse_unk"] = true;
  const ordered_json meta = {
      {"type", "Metaspace"}, {"replacement", "▁"}, {"prepend_scheme", "always"}, {"split", false}};
  check_file("bpe_fuse_unk", tokenizer_json(model, meta, meta));
}

TEST_CASE(".model files: WORD and CHAR models and treat_whitespace_as_suffix are refused") {
  TempDir dir("spm-refused");
  const fs::path corpus =
      fs::path(SHARDKIT_SOURCE_DIR) / "tests" / "data" / "shardify" / "docs.txt";
  for (const auto& [name, flags, why] :
       std::vector<std::tuple<std::string, std::string, std::string>>{
           {"word", "--model_type=word --vocab_size=200", "WORD"},
           {"char", "--model_type=char --vocab_size=60", "CHAR"},
           {"suffix", "--model_type=unigram --vocab_size=200 --treat_whitespace_as_suffix=true",
            "treat_whitespace_as_suffix"}}) {
    CAPTURE(name);
    const fs::path prefix = dir / name;
    std::string log;
    REQUIRE_MESSAGE(
        run_command("spm_train --input=" + corpus.string() + " --model_prefix=" + prefix.string() +
                        " " + flags + " --hard_vocab_limit=false --num_threads=1",
                    &log) == 0,
        log);
    const fs::path model = prefix.string() + ".model";
    // SentencePiece itself encodes with the file: it is valid, and the refusal is shardkit's.
    REQUIRE(run_command("echo 'Call me Ishmael.' | spm_encode --model=" + model.string() +
                            " --output_format=id",
                        &log) == 0);
    CHECK(!log.empty());
    try {
      Tokenizer::from_file(model);
      FAIL("a " << why << " .model was accepted");
    } catch (const Error& e) {
      CHECK(e.code() == ErrorCode::kUnsupported);
      CHECK_MESSAGE(std::string(e.what()).find(why) != std::string::npos, e.what());
    }
    CHECK(run_command("echo hello | " + tool_path("shardify/shardify") + " tokenize --tokenizer " +
                          model.string(),
                      &log) != 0);
    CHECK_MESSAGE(log.find(why) != std::string::npos, log);
  }
}

}  // namespace shardkit::testing
