// SentencePiece models trained here with Debian's spm_train on the fixture text (itself from
// Debian packages): Unigram and BPE with byte_fallback, written as tokenizer.json by the HF
// binding (tests/oracle/spm_to_tokenizer_json.js) and compared with HF tokenizers; the .model
// files themselves are compared with spm_encode.
#include <doctest/doctest.h>

#include <algorithm>
#include <random>

#include <nlohmann/json.hpp>

#include "parity_check.h"

using namespace shardkit;
using namespace shardkit::testing;

namespace {

// The model as tokenizer.json, through the HF binding's constructors.
std::filesystem::path to_tokenizer_json(const std::filesystem::path& model) {
  auto dump = model;
  dump.replace_extension(".dump.json");
  auto json = model;
  json.replace_extension(".json");
  std::string log;
  int rc = run_command("/usr/bin/python3 " + (oracle_dir() / "spm_dump.py").string() + " " +
                           model.string() + " " + dump.string() + " && node " +
                           (oracle_dir() / "spm_to_tokenizer_json.js").string() + " " +
                           dump.string() + " " + json.string(),
                       &log);
  REQUIRE_MESSAGE(rc == 0, "converting " << model << " failed: " << log);
  return json;
}

}  // namespace

TEST_CASE("SentencePiece Unigram (nmt_nfkc charsmap, Metaspace) as tokenizer.json matches HF") {
  auto json = to_tokenizer_json(
      train_spm_model("unigram", "--model_type=unigram --remove_extra_whitespaces=false"));
  check_full({"spm_unigram_json", json, {}, json});
}

TEST_CASE("HF's Precompiled charsmap, grapheme by grapheme, matches HF on seeded documents") {
  // HF maps each extended grapheme cluster whole (its shortest key) or character by character;
  // a grapheme of one character that no key meets, between two characters of the bound classes
  // that always break, is taken without utf8proc or the trie. Documents of Hangul syllables
  // (LV and LVT) beside leading, vowel and trailing jamo, combining and spacing marks, a
  // prepended mark, ZWJ emoji sequences and regional indicators, full-width and compatibility
  // characters the charsmap rewrites, CJK and ASCII: ids and offsets as HF's.
  auto json = to_tokenizer_json(
      train_spm_model("unigram", "--model_type=unigram --remove_extra_whitespaces=false"));
  const std::vector<std::string> parts = {
      "\uAC00",     "\uAC01",     "\uD55C", "\u1100", "\u1161", "\u11A8",     "\u0301",
      "\u0308",     "\u0903",     "\u0915", "\u0600", "\u200D", "\U0001F468", "\U0001F469",
      "\U0001F1EF", "\U0001F1F5", "\uFF21", "\uFF0C", "\u2460", "\uFB01",     "\u4E2D",
      "\u6587",     "a",          "e",      " ",      "\u3000", "\u00E9",     "\u0E01",
      "\u0E33",     "\r\n",       "x"};
  std::mt19937 random(41);
  std::string documents;
  for (int k = 0; k < 500; ++k) documents += random_join(parts, 1, 30, random) + '\x1e';
  const auto input = oracle_files() / ("graphemes-" + std::to_string(::getpid()) + ".txt");
  write_file(input, documents);
  check_full({"spm_unigram_json_graphemes", json, {}, json, input, true});
  std::filesystem::remove(input);
}

TEST_CASE("SentencePiece BPE with byte_fallback as tokenizer.json matches HF") {
  auto json = to_tokenizer_json(train_spm_model(
      "bpe", "--model_type=bpe --byte_fallback=true --remove_extra_whitespaces=false"));
  check_full({"spm_bpe_json", json, {}, json});
}

namespace {

// Our ids for every fixture line against spm_encode's (SentencePiece's own C++ encoder), and
// our decode against spm_decode's where the model has no unknown pieces to render.
// `input` (one sentence a line) defaults to the fixture lines.
void check_spm_model(const std::string& name, const std::filesystem::path& model, bool decode,
                     const std::vector<std::string>* sentences = nullptr) {
  std::vector<std::string> lines;
  auto input = fixture_text(&lines);
  if (sentences) {
    lines = *sentences;
    input = oracle_files() / (name + "-" + std::to_string(::getpid()) + ".txt");
    std::string all;
    for (const std::string& l : lines) all += l + "\n";
    write_file(input, all);
  }
  auto ids_file = oracle_files() / "spm" / (name + ".ids");
  auto text_file = oracle_files() / "spm" / (name + ".decoded");
  std::string log;
  REQUIRE_MESSAGE(run_command("spm_encode --model=" + model.string() + " --output_format=id < " +
                                  input.string() + " > " + ids_file.string(),
                              &log) == 0,
                  log);
  REQUIRE_MESSAGE(run_command("spm_decode --model=" + model.string() + " --input_format=id < " +
                                  ids_file.string() + " > " + text_file.string(),
                              &log) == 0,
                  log);
  std::vector<std::string> expected_ids, expected_text;
  for (auto* dest : {&expected_ids, &expected_text}) {
    std::string all = read_file(dest == &expected_ids ? ids_file : text_file);
    size_t pos = 0;
    while (pos < all.size()) {
      size_t nl = all.find('\n', pos);
      dest->push_back(all.substr(pos, nl - pos));
      pos = nl + 1;
    }
  }
  REQUIRE(expected_ids.size() == lines.size());
  auto tok = Tokenizer::from_file(model);
  size_t id_diff = 0, decode_diff = 0, shown = 0;
  for (size_t i = 0; i < lines.size(); ++i) {
    std::vector<uint32_t> ids;
    tok->encode_ids(lines[i], ids);
    std::string got;
    for (size_t k = 0; k < ids.size(); ++k) got += (k ? " " : "") + std::to_string(ids[k]);
    Encoding e = tok->encode(lines[i]);
    bool ids_ok = got == expected_ids[i] && e.ids == ids;
    bool decode_ok = !decode || tok->decode(ids, false) == expected_text[i];
    id_diff += !ids_ok;
    decode_diff += !decode_ok;
    if ((!ids_ok || !decode_ok) && shown++ < 5) {
      // Long sentences are shown from a little before their first difference.
      const std::string& want = expected_ids[i];
      const size_t differ = static_cast<size_t>(
          std::mismatch(got.begin(),
                        got.begin() + static_cast<ptrdiff_t>(std::min(got.size(), want.size())),
                        want.begin())
              .first -
          got.begin());
      const size_t from = differ > 100 ? differ - 100 : 0;
      MESSAGE(name << " line " << i + 1 << ": " << lines[i].substr(0, 200) << "\n  ids from char "
                   << from << "\n  ours " << got.substr(from, 300) << "\n  spm  "
                   << want.substr(from, 300) << "\n  ours decode "
                   << tok->decode(ids, false).substr(0, 300) << "\n  spm decode  "
                   << expected_text[i].substr(0, 300));
    }
  }
  MESSAGE(name << ": " << lines.size() - id_diff << "/" << lines.size()
               << " lines identical ids to spm_encode, " << lines.size() - decode_diff
               << " decodes");
  CHECK(id_diff == 0);
  CHECK(decode_diff == 0);
}

}  // namespace

namespace {

// ASCII bytes next to what the charsmap joins them with: a letter or '=' before a combining mark
// (NFKC composes them), CR LF (one grapheme), tabs, and marks at a line's start and end. The
// normalizers map ASCII by table only where nothing after a byte can change its mapping.
const std::vector<std::string> kAsciiEdges{
    "cafe\u0301 re\u0301sume\u0301 nai\u0308ve A\u030A\u0301 x\u0301\u0301",
    "a=\u0338b x<\u0338y z>\u0338 =\u0338",
    "one\r\ntwo \r\n\r\n three\r four\r",
    "tab\there\t\tand\u00A0no-break\u3000wide",
    "\u0301start e\u0301",
    "end e\u0301",
    "x\r\u0301 y\u200D\u0301 e\u20DD \uFB01 fi \u2460 1",
    "a\U0001F1EB\U0001F1F7\U0001F1E9\U0001F1EA b\U0001F44D\U0001F3FD c",
    "Plain ASCII, with digits 0123 and (punctuation)!"};

}  // namespace

TEST_CASE("ASCII beside combining marks and CR LF: charsmap table paths match HF and spm") {
  const auto input = oracle_files() / ("ascii-edges-" + std::to_string(::getpid()) + ".txt");
  std::string all;  // records, so that CR LF stays inside one
  for (const std::string& l : kAsciiEdges) all += l + "\x1e";
  write_file(input, all);
  auto json = to_tokenizer_json(
      train_spm_model("unigram", "--model_type=unigram --remove_extra_whitespaces=false"));
  check_full({"spm_unigram_json_ascii_edges", json, {}, json, input, true});
  std::filesystem::remove(input);
  // spm_encode reads lines, and ends one at a CR too.
  std::vector<std::string> lines;
  for (const std::string& l : kAsciiEdges)
    if (l.find('\r') == std::string::npos) lines.push_back(l);
  check_spm_model(
      "spm_unigram_ascii_edges",
      train_spm_model("unigram_udef", "--model_type=unigram '--user_defined_symbols=<mask>,@@,ab'"),
      false, &lines);
  check_spm_model("spm_bpe_ascii_edges",
                  train_spm_model("bpe_bytes",
                                  "--model_type=bpe --byte_fallback=true "
                                  "'--user_defined_symbols=<mask>,@@'"),
                  true, &lines);
}

TEST_CASE(".model Unigram (nmt_nfkc, remove_extra_whitespaces, user-defined symbols) matches spm") {
  check_spm_model(
      "spm_unigram_model",
      train_spm_model("unigram_udef", "--model_type=unigram '--user_defined_symbols=<mask>,@@,ab'"),
      false);
}

TEST_CASE(".model BPE with byte_fallback matches spm_encode and spm_decode") {
  check_spm_model("spm_bpe_model",
                  train_spm_model("bpe_bytes",
                                  "--model_type=bpe --byte_fallback=true "
                                  "'--user_defined_symbols=<mask>,@@'"),
                  true);
}

TEST_CASE(".model BPE with pieces across white space (no split at it) matches spm_encode") {
  // Trained without splitting at white space, the model has pieces such as "s▁of" and ",▁and"
  // (213 of its 3,000): each line is still cut into chunks before "▁", except where the halves
  // of such a piece meet at the cut.
  check_spm_model(
      "spm_bpe_across_spaces",
      train_spm_model("bpe_across_spaces_3000",
                      "--model_type=bpe --byte_fallback=true --split_by_whitespace=false "
                      "--split_by_unicode_script=false --split_by_number=false "
                      "--vocab_size=3000"),
      true);
}

TEST_CASE(".model identity normalization without dummy prefix matches spm") {
  check_spm_model("spm_unigram_identity",
                  train_spm_model("unigram_identity",
                                  "--model_type=unigram --normalization_rule_name=identity "
                                  "--add_dummy_prefix=false"),
                  false);
  check_spm_model(
      "spm_unigram_model_json_trained",
      train_spm_model("unigram", "--model_type=unigram --remove_extra_whitespaces=false"), false);
}

TEST_CASE(
    ".model Unigram and BPE over long sentences match spm (lattice cut where no piece "
    "crosses)") {
  // SentencePiece runs one lattice over a whole sentence, summing float scores along it. Ours
  // is cut where no piece crosses and carries the score there, and takes a remembered word's
  // path only while the score is within that word's bound, so the sums, and every near-tie they
  // decide, must stay those of one pass: sentences of ~8 KB (cut after 4 KB) and one of about
  // 1 MB (scores near -1e6, where a float step is 0.06). Taking remembered paths whatever the
  // score, or with a bound 100 times too lax, fails here.
  std::vector<std::string> lines;
  fixture_text(&lines);
  std::vector<std::string> sentences;
  for (size_t i = 0; i < lines.size(); i += 100) {
    std::string s;
    for (size_t k = i; k < std::min(lines.size(), i + 100); ++k) s += lines[k] + " ";
    sentences.push_back(s);
  }
  std::string whole;
  for (int copy = 0; copy < 32; ++copy)
    for (const std::string& l : lines) whole += l + (copy % 2 ? "  " : " ");
  sentences.push_back(whole);
  // The models' user-defined symbols (matched whole, before the pieces), next to spaces, inside
  // words and in runs, in short sentences and every ~40 bytes of a long one.
  const std::vector<std::string> symbols{"<mask>", "@@", "ab", " <mask> ", "x@@y", "@@@@", "ab ab"};
  auto char_start = [](const std::string& l, size_t at) {  // cut between characters only
    while (at > 0 && at < l.size() && (static_cast<unsigned char>(l[at]) & 0xC0) == 0x80) --at;
    return std::min(at, l.size());
  };
  std::string marked;
  for (size_t i = 0; i < 300; ++i) {
    const std::string& l = lines[i % lines.size()];
    const size_t half = char_start(l, l.size() / 2);
    sentences.push_back(l.substr(0, half) + symbols[i % symbols.size()] + l.substr(half));
    for (size_t at = 0; at < l.size();) {
      const size_t next = std::max(at + 1, char_start(l, at + 40));
      marked += l.substr(at, next - at) + symbols[at % symbols.size()];
      at = next;
    }
    marked += ' ';
  }
  sentences.push_back(marked);
  check_spm_model(
      "spm_unigram_long",
      train_spm_model("unigram_udef", "--model_type=unigram '--user_defined_symbols=<mask>,@@,ab'"),
      false, &sentences);
  // Trained without splitting at white space, this model has pieces such as "▁of▁the": its
  // lines cannot be taken a word at a time.
  check_spm_model(
      "spm_unigram_across_spaces_long",
      train_spm_model("unigram_across_spaces", "--model_type=unigram --split_by_whitespace=false"),
      false, &sentences);
  check_spm_model("spm_unigram_identity_long",
                  train_spm_model("unigram_identity",
                                  "--model_type=unigram --normalization_rule_name=identity "
                                  "--add_dummy_prefix=false"),
                  false, &sentences);
  check_spm_model("spm_bpe_long",
                  train_spm_model("bpe_bytes",
                                  "--model_type=bpe --byte_fallback=true "
                                  "'--user_defined_symbols=<mask>,@@'"),
                  true, &sentences);
}

namespace {

// A variant of a tokenizer.json with some components replaced, written beside it.
std::filesystem::path variant(const std::filesystem::path& base, const std::string& name,
                              const nlohmann::json& changes) {
  nlohmann::json j = nlohmann::json::parse(read_file(base));
  for (auto& [key, value] : changes.items()) j[key] = value;
  auto path = base.parent_path() / (name + ".json");
  write_file(path, j.dump());
  return path;
}

}  // namespace

TEST_CASE("normalizers, pre-tokenizers, decoders and RobertaProcessing of the pipeline match HF") {
  auto base = to_tokenizer_json(
      train_spm_model("unigram", "--model_type=unigram --remove_extra_whitespaces=false"));
  using nlohmann::json;
  const json metaspace = {{"type", "Metaspace"},
                          {"replacement", "\u2581"},
                          {"prepend_scheme", "always"},
                          {"split", true}};
  const std::vector<std::pair<std::string, json>> cases = {
      {"norm_lower_strip_accents",
       {{"normalizer",
         {{"type", "Sequence"},
          {"normalizers",
           {{{"type", "NFD"}},
            {{"type", "StripAccents"}},
            {{"type", "Lowercase"}},
            {{"type", "Strip"}, {"strip_left", true}, {"strip_right", true}}}}}}}},
      {"norm_nfkd_replace_regex",
       {{"normalizer",
         {{"type", "Sequence"},
          {"normalizers",
           {{{"type", "NFKD"}},
            {{"type", "Replace"}, {"pattern", {{"Regex", " {2,}"}}}, {"content", " "}},
            {{"type", "Prepend"}, {"prepend", "\u2581"}}}}}}}},
      {"pre_whitespace", {{"pre_tokenizer", {{"type", "Whitespace"}}}}},
      {"pre_sequence",
       {{"pre_tokenizer",
         {{"type", "Sequence"},
          {"pretokenizers",
           {{{"type", "WhitespaceSplit"}},
            {{"type", "Punctuation"}, {"behavior", "Contiguous"}},
            {{"type", "Digits"}, {"individual_digits", true}},
            {{"type", "CharDelimiterSplit"}, {"delimiter", "e"}},
            metaspace}}}}}},
      {"pre_bert_digits",
       {{"pre_tokenizer",
         {{"type", "Sequence"},
          {"pretokenizers",
           {{{"type", "BertPreTokenizer"}},
            {{"type", "Digits"}, {"individual_digits", false}}}}}}}},
      {"pre_metaspace_first",
       {{"pre_tokenizer",
         {{"type", "Metaspace"},
          {"replacement", "\u2581"},
          {"prepend_scheme", "first"},
          {"split", false}}},
        {"decoder",
         {{"type", "Sequence"},
          {"decoders",
           {{{"type", "Replace"}, {"pattern", {{"String", "\u2581"}}}, {"content", " "}},
            {{"type", "Strip"}, {"content", " "}, {"start", 1}, {"stop", 0}}}}}}}},
      {"roberta",
       {{"post_processor",
         {{"type", "RobertaProcessing"},
          {"sep", {"</s>", 2}},
          {"cls", {"<s>", 1}},
          {"trim_offsets", true},
          {"add_prefix_space", true}}}}},
  };
  for (const auto& [name, changes] : cases) {
    CAPTURE(name);
    auto f = variant(base, name, changes);
    check_full({name, f, {}, f});
  }
}

TEST_CASE("Unigram behind UnicodeScripts and Metaspace matches HF") {
  // As SentencePiece-converted XLM/Marian-style files combine them; the lines written for
  // UnicodeScripts (tests/data/tokenizer_scripts) follow the fixture lines.
  auto base = to_tokenizer_json(
      train_spm_model("unigram", "--model_type=unigram --remove_extra_whitespaces=false"));
  using nlohmann::json;
  const json scripts = {{"type", "UnicodeScripts"}};
  const json metaspace = {{"type", "Metaspace"},
                          {"replacement", "\u2581"},
                          {"prepend_scheme", "always"},
                          {"split", true}};
  const json metaspace_first = {{"type", "Metaspace"},
                                {"replacement", "\u2581"},
                                {"prepend_scheme", "first"},
                                {"split", false}};
  const std::vector<std::pair<std::string, json>> cases = {
      {"unigram_scripts_metaspace",
       {{"pre_tokenizer", {{"type", "Sequence"}, {"pretokenizers", {scripts, metaspace}}}}}},
      {"unigram_metaspace_scripts",
       {{"pre_tokenizer", {{"type", "Sequence"}, {"pretokenizers", {metaspace_first, scripts}}}}}},
      {"unigram_scripts_alone", {{"pre_tokenizer", scripts}}},
  };
  auto input = scripts_fixture_text();
  for (const auto& [name, changes] : cases) {
    CAPTURE(name);
    auto f = variant(base, name, changes);
    check_full({name, f, {}, f, input});
  }
}

TEST_CASE("WordLevel with a Whitespace pre-tokenizer matches HF") {
  std::vector<std::string> lines;
  fixture_text(&lines);
  nlohmann::json vocab = {{"[UNK]", 0}};
  int next = 1;
  for (const auto& l : lines) {
    std::string w;
    for (char c : l + " ") {
      if (c == ' ') {
        if (!w.empty() && !vocab.contains(w) && next < 800) vocab[w] = next++;
        w.clear();
      } else {
        w += c;
      }
    }
  }
  nlohmann::json j = {{"version", "1.0"},
                      {"truncation", nullptr},
                      {"padding", nullptr},
                      {"added_tokens", nlohmann::json::array()},
                      {"normalizer", {{"type", "Lowercase"}}},
                      {"pre_tokenizer", {{"type", "Whitespace"}}},
                      {"post_processor", nullptr},
                      {"decoder", nullptr},
                      {"model", {{"type", "WordLevel"}, {"vocab", vocab}, {"unk_token", "[UNK]"}}}};
  auto path = oracle_files() / "wordlevel.json";
  write_file(path, j.dump());
  check_full({"wordlevel", path, {}, path});
}

TEST_CASE(".model files with a thousand user-defined symbols that prefix each other match spm") {
  // User-defined symbols are matched, longest first, at every position before normalizing and
  // merging: "<u1>", "<u12>", "<u123>" and "<u1234>" all exist, as do "ab" and "abc" and CJK
  // symbols. Sentences put each beside its prefixes, its extensions and the text around it.
  std::string symbols;
  for (int i = 0; i < 1000; ++i) symbols += "<u" + std::to_string(i) + ">,";
  symbols += "<u1234>,ab,abc,x1y,\u4E2D\u6587,\u4E2D,\uD55C\uAD6D\uC5B4";
  std::vector<std::string> sentences;
  const std::vector<std::string> parts = {"<u1>",    "<u12>",    "<u123>",
                                          "<u1234>", "<u12345>", "<u",
                                          "<u999>",  "ab",       "abc",
                                          "abcd",    "a",        "x1y",
                                          "x1",      " ",        "  ",
                                          "the",     "text",     "\u4E2D\u6587",
                                          "\u4E2D",  "\u6587",   "\uD55C\uAD6D\uC5B4",
                                          "\uD55C",  ".",        "\t"};
  std::mt19937 random(23);
  for (int k = 0; k < 300; ++k) {
    sentences.push_back(random_join(parts, 3, 20, random));
  }
  const std::string flags = "--vocab_size=3000 '--user_defined_symbols=" + symbols + "'";
  check_spm_model("spm_unigram_many_udef",
                  train_spm_model("unigram_many_udef", "--model_type=unigram " + flags), false,
                  &sentences);
  check_spm_model(
      "spm_bpe_many_udef",
      train_spm_model("bpe_many_udef", "--model_type=bpe --byte_fallback=true " + flags), true,
      &sentences);
}
