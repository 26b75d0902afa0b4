// BERT tokenizer.json files with normalized added tokens, as transformers saves them after
// tokenizer.add_tokens(...) (AddedToken's `normalized` is true for tokens that are not special):
// HF matches those in the text BertNormalizer made of each segment between the other added
// tokens, their contents normalized too. The files are written by HF tokenizers itself
// (tests/oracle/add_tokens.js) from the uncased BERT file and its cased settings, and checked
// line by line against HF (ids, encode_ids, offsets, specials, decode; parity_check.h) on the
// fixture text, lines aimed at each token, random mixes, and every scalar value.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <random>

#include "parity_check.h"
#include "tokenizer/unicode.h"

namespace shardkit::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

json token(const std::string& content, json flags = json::object()) {
  flags["content"] = content;
  return flags;
}

// Normalized tokens in mixed case, with accents, of CJK ideographs, holding a space, a prefix of
// vocabulary words ("hel": "hello", "help"), one whose lowercase and NFD differ ("İstanbul"),
// single_word, lstrip and rstrip ones; beside them tokens matched in the raw text.
const json kTokens = json::array({
    token("MyToken"),
    token("Café"),
    token("ÉLAN"),
    token("中文"),
    token("new york"),
    token("hel"),
    token("İstanbul"),
    token("Xy", {{"single_word", true}}),
    token("<L>", {{"lstrip", true}}),
    token("<R>", {{"rstrip", true}}),
    token("Zz", {{"lstrip", true}, {"rstrip", true}, {"single_word", true}}),
    token("NoNorm", {{"normalized", false}}),
    token("[NEW]", {{"special", true}}),
    token("[Norm]", {{"special", true}, {"normalized", true}}),
});

// Each token's content in other spellings: cases, accents, neighbours.
const char* const kLines =
    "MyToken\n"
    "mytoken MYTOKEN myToken MyTokens xMyToken MyToken.\n"
    "(MyToken),MyToken!MyToken?\n"
    "Café cafe CAFÉ café Cafe\u0301 cafés\n"
    "ÉLAN élan elan Élan ELAN\n"
    "中文 我爱中文。 中 文 中文中文 x中文y\n"
    "new york New York NEW  YORK new\tyork new\nyork newyork new york city\n"
    "hel hello help helium Hel HELLO hel-lo\n"
    "İstanbul istanbul ISTANBUL i\u0307stanbul\n"
    "Xy xy XY axy xya (xy) xy. Xy_ Xy1 éxy\n"
    "a <L> b  <l>c\t<L>\n"
    "a <R> b <r>  c <R>\n"
    "zz Zz ZZ a zz b xzz zzx\n"
    "NoNorm nonorm NONORM xNoNormy\n"
    "[NEW] [new] x[NEW]y\n"
    "[Norm] [norm] [NORM] x[norm]y\n"
    " MyToken \n"
    "\u00A0MyToken\u3000café\u2003中文\n"
    "My\u00ADToken Caf\u200Be My\u0001Token\n"
    "MyToken中文Café\n"
    "hello [MASK] MyToken [SEP] world\n";

// Spellings of the tokens and of what stands around them, joined at random.
const std::vector<std::string> kPieces = {
    "MyToken", "mytoken", "MYTOKEN", "Café", "cafe", "CAFÉ",   "élan",   "ÉLAN",   "中",
    "文",      "中文",    "new",     "york", "NEW",  "hel",    "hello",  "İ",      "istanbul",
    "Xy",      "xy",      "<L>",     "<r>",  "Zz",   "zz",     "NoNorm", "nonorm", "[NEW]",
    "[norm]",  "[MASK]",  " ",       "  ",   "\t",   "\u00A0", ".",      ",",      "(",
    ")",       "-",       "a",       "B",    "1",    "\u0301", "é",      "\u3000", "ß",
    "Ω",       "\u200B",  "\x01",    "한국", "😀",    "\u2014", "'",      "s"};

fs::path add_tokens(const fs::path& base, const fs::path& out) {
  const fs::path specs = out.string() + ".tokens";
  write_file(specs, kTokens.dump());
  std::string log;
  const int rc = run_command("node " + (oracle_dir() / "add_tokens.js").string() + " " +
                                 base.string() + " " + out.string() + " " + specs.string(),
                             &log);
  REQUIRE_MESSAGE(rc == 0, "add_tokens.js failed: " << log);
  return out;
}

fs::path aimed_input(const fs::path& dir) {
  std::vector<std::string> fixture;
  fixture_text(&fixture);
  std::string all;
  for (const std::string& l : fixture) all += l + "\n";
  all += kLines;
  std::mt19937 random(7);
  for (int k = 0; k < 3000; ++k) all += random_join(kPieces, 1, 16, random) + "\n";
  const fs::path p = dir / "input.txt";
  write_file(p, all);
  return p;
}

// Every scalar value but the line separator, between letters and beside a token, 32 to a line.
fs::path scalar_values_input(const fs::path& dir) {
  std::string all;
  size_t on_line = 0;
  for (char32_t cp = 1; cp <= 0x10FFFF; ++cp) {
    if (cp == '\n' || (cp >= 0xD800 && cp <= 0xDFFF)) continue;
    std::string c;
    shardkit::tok::append_utf8(c, cp);
    all += "A" + c + "b" + c + "MyToken" + c + " ";
    if (++on_line % 32 == 0) all += "\n";
  }
  all += "\n";
  const fs::path p = dir / "scalar-values.txt";
  write_file(p, all);
  return p;
}

}  // namespace

TEST_CASE("BERT with normalized added tokens, uncased and cased, as HF's") {
  TempDir dir("bert-added");
  const fs::path input = aimed_input(dir.path());
  for (const char* base : {"bert-base-uncased", "bert-base-cased-settings"}) {
    CAPTURE(base);
    const fs::path file = add_tokens(oracle_files() / (std::string(base) + ".json"),
                                     dir / (std::string(base) + ".json"));
    check_full(Case{std::string(base) + "+added", file, {}, file, input});
  }
}

TEST_CASE("BERT with normalized added tokens on every scalar value, as HF's") {
  TempDir dir("bert-added-scalars");
  const fs::path input = scalar_values_input(dir.path());
  const fs::path file =
      add_tokens(oracle_files() / "bert-base-uncased.json", dir / "bert-base-uncased.json");
  check_full(Case{"bert-base-uncased+added-scalar-values", file, {}, file, input});
}

}  // namespace shardkit::testing
