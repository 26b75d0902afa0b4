// Each task and input format converted by the shardify tool, checked record by record against
// token ids from HuggingFace tokenizers (node) and the layout rules the README states.
#include <doctest/doctest.h>

#include <map>

#include "shardify_util.h"

using namespace shardkit::testing;
namespace fs = std::filesystem;

namespace {

// Expected packed windows: each document's ids followed by `sep`, cut every max_len tokens,
// the last window of each file padded with `pad`.
std::vector<std::vector<uint32_t>> pack(
    const std::vector<std::vector<std::vector<uint32_t>>>& files, uint32_t sep, uint32_t max_len,
    std::vector<uint32_t>* lengths) {
  std::vector<std::vector<uint32_t>> windows;
  for (const auto& docs : files) {
    std::vector<uint32_t> stream;
    for (const auto& d : docs) {
      stream.insert(stream.end(), d.begin(), d.end());
      stream.push_back(sep);
    }
    for (size_t i = 0; i < stream.size(); i += max_len) {
      size_t n = std::min<size_t>(max_len, stream.size() - i);
      windows.emplace_back(stream.begin() + i, stream.begin() + i + n);
      lengths->push_back(static_cast<uint32_t>(n));
    }
  }
  return windows;
}

std::vector<std::string> jsonl_field(const fs::path& file, const char* a, const char* b = nullptr) {
  std::vector<std::string> out;
  simdjson::dom::parser p;
  for (const std::string& line : nonblank_lines(read_file(file))) {
    simdjson::dom::element e = p.parse(line).value();
    out.emplace_back(
        std::string_view(b ? e[a][b].get_string().value() : e[a].get_string().value()));
  }
  return out;
}

void check_padded(const Rec& r, uint32_t pad) {
  for (size_t i = r.length; i < r.input_ids.size(); ++i) REQUIRE(r.input_ids[i] == pad);
}

}  // namespace

TEST_CASE("lm: text files (plain, .gz, .zst) pack into windows of HF ids joined by [SEP]") {
  TempDir tmp("lm");
  fs::create_directories(tmp / "in");
  fs::copy_file(shardify_data("docs.txt"), tmp / "in" / "a.txt");
  REQUIRE(run_command("gzip -c " + q(shardify_data("docs_blank.txt")) + " > " +
                      q(tmp / "in" / "b.txt.gz")) == 0);
  REQUIRE(run_command("zstd -q -c " + q(shardify_data("docs.txt")) + " > " +
                      q(tmp / "in" / "c.txt.zst")) == 0);
  shardify_ok("--input " + q(tmp / "in") +
              " --task lm --doc-sep line --max-len 16 --threads 2 --tokenizer " + q(bert_vocab()) +
              " --out " + q(tmp / "ds"));

  const auto docs_a = nonblank_lines(read_file(shardify_data("docs.txt")));
  const auto docs_b =
      nonblank_lines(read_file(shardify_data("docs_blank.txt")));  // one document per line
  HfSpecials sp;
  auto a = hf_ids(bert_json(), docs_a, "plain", 0, &sp);
  auto b = hf_ids(bert_json(), docs_b, "plain");
  REQUIRE(sp.sep == 102);
  std::vector<uint32_t> lengths;
  auto windows = pack({a, b, a}, sp.sep, 16, &lengths);

  auto recs = read_records(tmp / "ds");
  REQUIRE(recs.size() == windows.size());
  for (size_t i = 0; i < recs.size(); ++i) {
    INFO("record " << i);
    CHECK(recs[i].length == lengths[i]);
    CHECK(real_ids(recs[i]) == windows[i]);
    check_padded(recs[i], sp.pad);
  }
  std::string out;
  REQUIRE(run_command(inspect_bin() + " verify " + q(tmp / "ds"), &out) == 0);
}

TEST_CASE("lm: --doc-sep blank joins paragraph lines; --position-ids restart at documents") {
  TempDir tmp("lmblank");
  shardify_ok("--input " + q(shardify_data("docs_blank.txt")) +
              " --doc-sep blank --position-ids --task lm --max-len 8 --threads 1 --tokenizer " +
              q(bert_json()) + " --out " + q(tmp / "ds"));
  // The fixture's paragraphs, written out by hand.
  const std::vector<std::string> docs = {
      "Chapter one.\nThe sea was calm that morning,\nand the crew was restless.",
      "Chapter two.\nA storm arrived before noon.", "Chapter three is a single line."};
  HfSpecials sp;
  auto ids = hf_ids(bert_json(), docs, "plain", 0, &sp);
  std::vector<uint32_t> lengths;
  auto windows = pack({ids}, sp.sep, 8, &lengths);
  // Positions count from 0 at each document start and at each window start.
  std::vector<bool> doc_start;  // per token of the packed stream
  for (const auto& d : ids)
    for (size_t i = 0; i <= d.size(); ++i) doc_start.push_back(i == 0);
  std::vector<std::vector<uint32_t>> positions;
  size_t k = 0;
  for (const auto& w : windows) {
    std::vector<uint32_t> p;
    for (size_t i = 0; i < w.size(); ++i, ++k)
      p.push_back(i == 0 || doc_start[k] ? 0 : p.back() + 1);
    positions.push_back(p);
  }
  auto recs = read_records(tmp / "ds");
  REQUIRE(recs.size() == windows.size());
  for (size_t i = 0; i < recs.size(); ++i) {
    INFO("record " << i);
    CHECK(real_ids(recs[i]) == windows[i]);
    std::vector<uint32_t> got(recs[i].position_ids.begin(),
                              recs[i].position_ids.begin() + recs[i].length);
    CHECK(got == positions[i]);
  }
}

TEST_CASE(
    "lm: JSONL with a dotted field path; --no-pack gives one [CLS] doc [SEP] record per document") {
  TempDir tmp("lmjsonl");
  shardify_ok("--input " + q(shardify_data("docs.jsonl")) +
              " --text-field meta.body --task lm --max-len 12 "
              "--tokenizer " +
              q(bert_json()) + " --out " + q(tmp / "pack"));
  shardify_ok("--input " + q(shardify_data("docs.jsonl")) +
              " --task lm --no-pack --max-len 12 --tokenizer " + q(bert_json()) + " --out " +
              q(tmp / "nopack"));
  HfSpecials sp;
  auto body = hf_ids(bert_json(), jsonl_field(shardify_data("docs.jsonl"), "meta", "body"), "plain",
                     0, &sp);
  std::vector<uint32_t> lengths;
  auto windows = pack({body}, sp.sep, 12, &lengths);
  auto recs = read_records(tmp / "pack");
  REQUIRE(recs.size() == windows.size());
  for (size_t i = 0; i < recs.size(); ++i) CHECK(real_ids(recs[i]) == windows[i]);

  auto single = hf_ids(bert_json(), jsonl_field(shardify_data("docs.jsonl"), "text"), "single", 12);
  recs = read_records(tmp / "nopack");
  REQUIRE(recs.size() == single.size());
  for (size_t i = 0; i < recs.size(); ++i) {
    INFO("record " << i);
    CHECK(real_ids(recs[i]) == single[i]);
    check_padded(recs[i], sp.pad);
  }
}

TEST_CASE("lm: GPT-2 byte-level BPE joins documents with <|endoftext|> in u16 records") {
  TempDir tmp("gpt2");
  shardify_ok("--input " + q(shardify_data("docs.txt")) +
              " --task lm --doc-sep line --max-len 32 --tokenizer " + q(gpt2_json()) + " --out " +
              q(tmp / "ds"));
  auto ids = hf_ids(gpt2_json(), nonblank_lines(read_file(shardify_data("docs.txt"))), "plain");
  std::vector<uint32_t> lengths;
  auto windows = pack({ids}, 50256, 32, &lengths);
  auto recs = read_records(tmp / "ds");
  REQUIRE(recs.size() == windows.size());
  for (size_t i = 0; i < recs.size(); ++i) CHECK(real_ids(recs[i]) == windows[i]);
  auto ds = shardkit::Dataset::open(tmp / "ds");
  CHECK(ds.schema().at("input_ids").dtype == shardkit::DType::kU16);
}

TEST_CASE(
    "lm: a vocabulary past 65,536 ids (o200k) stores i32 ids, documents ending in <|endoftext|>") {
  TempDir tmp("o200k");
  shardify_ok("--input " + q(shardify_data("docs.txt")) +
              " --task lm --doc-sep line --max-len 40 --tokenizer " + q(o200k_json()) + " --out " +
              q(tmp / "ds"));
  HfSpecials sp;
  auto ids =
      hf_ids(o200k_json(), nonblank_lines(read_file(shardify_data("docs.txt"))), "plain", 0, &sp);
  REQUIRE(sp.eot == 199999);
  std::vector<uint32_t> lengths;
  auto windows = pack({ids}, sp.eot, 40, &lengths);
  auto recs = read_records(tmp / "ds");
  REQUIRE(recs.size() == windows.size());
  for (size_t i = 0; i < recs.size(); ++i) CHECK(real_ids(recs[i]) == windows[i]);
  CHECK(shardkit::Dataset::open(tmp / "ds").schema().at("input_ids").dtype ==
        shardkit::DType::kI32);
}

TEST_CASE("cls: CSV with RFC 4180 quoting; labels in lexicographic order or as --labels gives") {
  TempDir tmp("cls");
  // The CSV fixture's texts as a reader must see them: commas, doubled quotes and a newline
  // inside quoted fields.
  const std::vector<std::string> texts = {
      "Great product, works exactly as described.",
      "Terrible. Broke after two days",
      "The manual says \"plug and play\", but it was neither.",
      "It is fine.\nNothing special, nothing bad.",
      "Shipping was fast; the box was \"a bit\" dented, yet everything inside was intact and the "
      "battery lasted far "
      "longer than the specification promised, which I did not expect at this price.",
      "Okay I guess"};
  const std::vector<std::string> labels = {"pos", "neg", "neg", "neutral", "pos", "neutral"};
  shardify_ok("--input " + q(shardify_data("reviews.csv")) +
              " --task cls --max-len 16 --tokenizer " + q(bert_json()) + " --out " +
              q(tmp / "lex"));
  shardify_ok("--input " + q(shardify_data("reviews.csv")) +
              " --task cls --max-len 16 --labels pos,neg,neutral "
              "--tokenizer " +
              q(bert_json()) + " --out " + q(tmp / "given"));
  auto expected = hf_ids(bert_json(), texts, "single", 16);
  const std::map<std::string, int> lex = {{"neg", 0}, {"neutral", 1}, {"pos", 2}};
  const std::map<std::string, int> given = {{"pos", 0}, {"neg", 1}, {"neutral", 2}};
  for (auto [dir, order] : {std::pair{"lex", &lex}, std::pair{"given", &given}}) {
    auto recs = read_records(tmp / dir);
    REQUIRE(recs.size() == texts.size());
    for (size_t i = 0; i < recs.size(); ++i) {
      INFO(dir << " record " << i);
      CHECK(real_ids(recs[i]) == expected[i]);
      CHECK(recs[i].labels == order->at(labels[i]));
    }
  }
  using Labels = shardkit::LabelInfo;
  CHECK(shardkit::Dataset::open(tmp / "lex").info().labels ==
        Labels{{"neg", "neutral", "pos"}, "lexicographic"});
  CHECK(shardkit::Dataset::open(tmp / "given").info().labels ==
        Labels{{"pos", "neg", "neutral"}, "given"});
}

TEST_CASE("cls: TSV with integer labels orders them numerically") {
  TempDir tmp("tsv");
  shardify_ok("--input " + q(shardify_data("reviews.tsv")) +
              " --task cls --max-len 16 --tokenizer " + q(bert_json()) + " --out " + q(tmp / "ds"));
  const std::vector<std::string> texts = {"first review, plain", "second one has \"quotes\" inside",
                                          "a quoted field\twith a tab", "fourth"};
  const std::vector<int> labels = {1, 2, 0, 1};  // "2", "10", "0", "2" in the order 0 < 2 < 10
  auto expected = hf_ids(bert_json(), texts, "single", 16);
  auto recs = read_records(tmp / "ds");
  REQUIRE(recs.size() == texts.size());
  for (size_t i = 0; i < recs.size(); ++i) {
    CHECK(real_ids(recs[i]) == expected[i]);
    CHECK(recs[i].labels == labels[i]);
  }
  CHECK(shardkit::Dataset::open(tmp / "ds").info().labels ==
        shardkit::LabelInfo{{"0", "2", "10"}, "numeric"});
}

TEST_CASE("pair: premise/hypothesis with HF longest_first truncation and type ids") {
  // Several budgets: which text loses the odd token under longest_first depends on where HF's
  // early stop cuts each text, so one budget alone can agree by luck.
  for (int max_len : {13, 17, 24, 31}) {
    CAPTURE(max_len);
    TempDir tmp("pair");
    shardify_ok("--input " + q(shardify_data("nli.jsonl")) +
                " --task pair --text-field premise --pair-field hypothesis "
                "--max-len " +
                std::to_string(max_len) + " --tokenizer " + q(bert_json()) + " --out " +
                q(tmp / "ds"));
    auto prem = jsonl_field(shardify_data("nli.jsonl"), "premise");
    auto hyp = jsonl_field(shardify_data("nli.jsonl"), "hypothesis");
    auto lab = jsonl_field(shardify_data("nli.jsonl"), "label");
    std::string items = "[";
    for (size_t i = 0; i < prem.size(); ++i)
      items += (i ? "," : "") + std::string("{\"text\":") + json_string(prem[i]) +
               ",\"pair\":" + json_string(hyp[i]) + "}";
    std::string text = hf_expect(
        bert_json(),
        "\"mode\":\"pair\",\"max_len\":" + std::to_string(max_len) + ",\"items\":" + items + "]",
        "pair");
    simdjson::dom::parser p;
    auto root = p.parse(text).value();
    const std::map<std::string, int> order = {
        {"contradiction", 0}, {"entailment", 1}, {"neutral", 2}};
    auto recs = read_records(tmp / "ds");
    REQUIRE(recs.size() == prem.size());
    size_t i = 0, truncated = 0;
    for (auto e : as_array(root["results"])) {
      INFO("record " << i);
      auto ids = json_u32s(e["ids"].value());
      auto types = json_u32s(e["type_ids"].value());
      CHECK(real_ids(recs[i]) == ids);
      CHECK(std::vector<uint32_t>(recs[i].token_type_ids.begin(),
                                  recs[i].token_type_ids.begin() + recs[i].length) == types);
      CHECK(recs[i].labels == order.at(lab[i]));
      truncated += ids.size() == static_cast<size_t>(max_len);
      ++i;
    }
    CHECK(truncated >= 2);  // the fixture makes both the first and the second text overflow
  }
}

namespace {

size_t byte_of_code_point(const std::string& s, size_t cp) {
  size_t seen = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if ((static_cast<unsigned char>(s[i]) & 0xC0) == 0x80) continue;
    if (seen++ == cp) return i;
  }
  return s.size();
}

size_t code_points(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

// Converts a SQuAD file and checks every window against HF's ids and the window arithmetic of
// HF's overflowing truncation, positions against HF's offsets, and that the stored positions
// recover the annotated answer text.
void check_squad(const std::string& fixture, const fs::path& tokenizer, uint32_t max_len,
                 uint32_t stride, bool bert_template) {
  TempDir tmp("qa");
  shardify_ok("--input " + q(shardify_data(fixture)) + " --task qa --max-len " +
              std::to_string(max_len) + " --doc-stride " + std::to_string(stride) +
              " --max-query-len 16 --threads 2 --tokenizer " + q(tokenizer) + " --out " +
              q(tmp / "ds"));
  struct Q {
    std::string context, question, answer;
    int64_t answer_start = -1;  // code points; -1 when impossible
  };
  std::vector<Q> qs;
  simdjson::dom::parser p;
  std::string json = read_file(shardify_data(fixture));
  auto root = p.parse(json).value();
  std::string items = "[";
  for (auto art : as_array(root["data"]))
    for (auto para : as_array(art["paragraphs"]))
      for (auto qa : as_array(para["qas"])) {
        Q x;
        x.context = std::string(para["context"].get_string().value());
        x.question = std::string(qa["question"].get_string().value());
        bool impossible = false;
        if (qa["is_impossible"].error() == simdjson::SUCCESS)
          impossible = qa["is_impossible"].get_bool().value();
        if (!impossible) {
          auto a = as_array(qa["answers"]).at(0).value();
          x.answer = std::string(a["text"].get_string().value());
          x.answer_start = a["answer_start"].get_int64().value();
        }
        items += (qs.empty() ? "" : ",") + std::string("{\"question\":") + json_string(x.question) +
                 ",\"context\":" + json_string(x.context) + "}";
        qs.push_back(x);
      }
  std::string text = hf_expect(tokenizer, "\"mode\":\"qa\",\"items\":" + items + "]", "qa");
  simdjson::dom::parser p2;
  auto hf = p2.parse(text).value();
  const HfSpecials sp = hf_specials(hf);
  auto recs = read_records(tmp / "ds");
  size_t r = 0, answered_windows = 0, multi_window = 0;
  size_t qi = 0;
  for (auto res : as_array(hf["results"])) {
    const Q& x = qs[qi];
    auto question = json_u32s(res["question"].value());
    auto context = json_u32s(res["context"].value());
    auto offsets = json_offsets(res["offsets"].value());  // code points
    const size_t added_before = bert_template ? 2 : 0;    // [CLS] q [SEP] before the context
    const size_t added = bert_template ? 3 : 0;
    const size_t room = max_len - question.size() - added;
    const size_t step = room - stride;
    bool found = false;
    size_t windows = 0;
    for (size_t start = 0;; start += step, ++windows) {
      const size_t stop = std::min(start + room, context.size());
      INFO("question " << qi << " window starting at context token " << start);
      REQUIRE(r < recs.size());
      const Rec& rec = recs[r++];
      std::vector<uint32_t> ids;
      if (bert_template) ids.push_back(sp.cls);
      ids.insert(ids.end(), question.begin(), question.end());
      if (bert_template) ids.push_back(sp.sep);
      ids.insert(ids.end(), context.begin() + start, context.begin() + stop);
      if (bert_template) ids.push_back(sp.sep);
      CHECK(real_ids(rec) == ids);
      CHECK(rec.example_index == qi);
      if (bert_template) {
        for (size_t i = 0; i < rec.length; ++i)
          CHECK(rec.token_type_ids[i] == (i < question.size() + 2 ? 0u : 1u));
      }
      int32_t es = 0, ee = 0;
      if (x.answer_start >= 0) {
        const size_t a = static_cast<size_t>(x.answer_start), b = a + code_points(x.answer);
        if (offsets[start].first <= a && offsets[stop - 1].second >= b) {
          size_t s = start, e = stop - 1;
          while (s + 1 < stop && offsets[s + 1].first <= a) ++s;
          while (e > start && offsets[e - 1].second >= b) --e;
          es = static_cast<int32_t>(added_before + question.size() + (s - start));
          ee = static_cast<int32_t>(added_before + question.size() + (e - start));
        }
      }
      CHECK(rec.start == es);
      CHECK(rec.end == ee);
      if (rec.start != 0 || rec.end != 0) {
        // The answer text, recovered through HF's offsets of the stored token positions.
        const size_t s_tok = start + rec.start - added_before - question.size();
        const size_t e_tok = start + rec.end - added_before - question.size();
        const size_t from = byte_of_code_point(x.context, offsets[s_tok].first);
        const size_t to = byte_of_code_point(x.context, offsets[e_tok].second);
        CHECK(x.context.substr(from, to - from) == x.answer);
        found = true;
        ++answered_windows;
      }
      if (stop == context.size()) break;
    }
    multi_window += windows > 0;
    if (x.answer_start >= 0)
      CHECK_MESSAGE(found, "question " << qi << " has no window with its answer");
    ++qi;
  }
  CHECK(r == recs.size());
  CHECK(multi_window > 0);  // the fixtures must exercise the stride
  CHECK(answered_windows > 0);
  REQUIRE(run_command(inspect_bin() + " verify " + q(tmp / "ds")) == 0);
}

}  // namespace

TEST_CASE("qa: SQuAD v1.1 windows, positions and recovered answers (BERT)") {
  check_squad("squad_v1.json", bert_json(), 48, 8, true);
}

TEST_CASE("qa: SQuAD v2.0 with is_impossible (BERT vocab.txt)") {
  check_squad("squad_v2.json", bert_json(), 40, 12, true);
}

TEST_CASE("qa: JSONL in HF datasets' SQuAD layout gives the records of the SQuAD file") {
  TempDir tmp("qajsonl");
  // The v2 fixture rewritten one question per line, answers as {"text": [...], "answer_start":
  // [...]}.
  simdjson::dom::parser p;
  std::string json = read_file(shardify_data("squad_v2.json"));
  auto root = p.parse(json).value();
  std::string lines;
  for (auto art : as_array(root["data"]))
    for (auto para : as_array(art["paragraphs"]))
      for (auto qa : as_array(para["qas"])) {
        std::string texts, starts;
        for (auto a : as_array(qa["answers"])) {
          texts +=
              (texts.empty() ? "" : ",") + json_string(std::string(a["text"].get_string().value()));
          starts +=
              (starts.empty() ? "" : ",") + std::to_string(a["answer_start"].get_int64().value());
        }
        lines += "{\"id\":" + json_string(std::string(qa["id"].get_string().value())) +
                 ",\"context\":" + json_string(std::string(para["context"].get_string().value())) +
                 ",\"question\":" + json_string(std::string(qa["question"].get_string().value())) +
                 ",\"answers\":{\"text\":[" + texts + "],\"answer_start\":[" + starts + "]}}\n";
      }
  write_file(tmp / "v2.jsonl", lines);
  const std::string flags = " --task qa --max-len 40 --doc-stride 12 --max-query-len 16" +
                            std::string(" --tokenizer ") + q(bert_json());
  shardify_ok("--input " + q(shardify_data("squad_v2.json")) + flags + " --out " +
              q(tmp / "squad"));
  shardify_ok("--input " + q(tmp / "v2.jsonl") + flags + " --out " + q(tmp / "jsonl"));
  auto a = read_records(tmp / "squad"), b = read_records(tmp / "jsonl");
  REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    INFO("record " << i);
    CHECK(a[i].input_ids == b[i].input_ids);
    CHECK(a[i].token_type_ids == b[i].token_type_ids);
    CHECK(a[i].start == b[i].start);
    CHECK(a[i].end == b[i].end);
    CHECK(a[i].example_index == b[i].example_index);
  }
}

TEST_CASE("qa: questions longer than --max-query-len keep their first tokens (BERT's cut)") {
  TempDir tmp("qa-query");
  const std::vector<std::string> questions = {
      "What did the very long and winding question about the old harbour town ask of the "
      "people who lived there?",
      "  Who?",
      "Which of the many ships that sailed from the harbour in the spring carried the most "
      "cargo?"};
  const std::string context =
      "The harbour town was old. Many ships sailed from it in the spring, and the largest "
      "carried grain.";
  std::string rows;
  for (const std::string& qn : questions)
    rows += "{\"context\": " + json_string(context) + ", \"question\": " + json_string(qn) +
            ", \"answers\": {\"text\": [\"grain\"], \"answer_start\": [" +
            std::to_string(context.find("grain")) + "]}}\n";
  write_file(tmp / "qa.jsonl", rows);
  shardify_ok("--input " + q(tmp / "qa.jsonl") +
              " --task qa --max-len 96 --doc-stride 16 --max-query-len 8 --tokenizer " +
              q(bert_json()) + " --out " + q(tmp / "ds"));
  std::string items = "[";
  for (size_t i = 0; i < questions.size(); ++i)
    items += (i ? "," : "") + std::string("{\"question\":") + json_string(questions[i]) +
             ",\"context\":" + json_string(context) + "}";
  simdjson::dom::parser p;
  auto hf =
      p.parse(hf_expect(bert_json(), "\"mode\":\"qa\",\"items\":" + items + "]", "qa")).value();
  const HfSpecials sp = hf_specials(hf);
  auto recs = read_records(tmp / "ds");
  REQUIRE(recs.size() == questions.size());  // each context fits one window
  size_t i = 0, cut = 0;
  for (auto res : as_array(hf["results"])) {
    INFO("question " << i);
    auto question = json_u32s(res["question"].value());
    const auto context_ids = json_u32s(res["context"].value());
    cut += question.size() > 8;
    question.resize(std::min<size_t>(question.size(), 8));
    std::vector<uint32_t> ids = {sp.cls};
    ids.insert(ids.end(), question.begin(), question.end());
    ids.push_back(sp.sep);
    ids.insert(ids.end(), context_ids.begin(), context_ids.end());
    ids.push_back(sp.sep);
    CHECK(real_ids(recs[i]) == ids);
    ++i;
  }
  CHECK(cut == 2);
}
