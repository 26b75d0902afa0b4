// SQuAD-style JSON (v1.1, v2.0 with is_impossible; KorQuAD uses it too):
//   {"data": [{"paragraphs": [{"context": "...", "qas": [{"id", "question",
//     "answers": [{"text", "answer_start"}], "is_impossible"}]}]}]}
// One example per paragraph. answer_start counts code points; it becomes a byte offset here,
// checked against the answer text. Training uses the first answer, as HF's run_qa does.
#include <simdjson.h>

#include <deque>

#include "core/error.h"
#include "core/utf8.h"
#include "shardify/byte_source.h"
#include "shardify/first_row_fields.h"
#include "shardify/json_wide_numbers.h"
#include "shardify/readers_internal.h"

namespace shardkit::shardify {
namespace {

constexpr const char* kJsonLinesHint =
    "; the file holds JSON Lines (one object per line, as datasets' to_json writes them): pass "
    "--format jsonl";

class SquadReader : public ExampleReader {
 public:
  SquadReader(const std::filesystem::path& path, uint32_t file_index) : file_index_(file_index) {
    consumed_ = std::filesystem::file_size(path);
    std::string text;
    try {
      text = read_all(path);
    } catch (const Error& e) {
      // A truncated or corrupt .gz/.zst: one JSON document, so nothing of it is usable.
      if (e.code() != ErrorCode::kInput) throw;
      fail("", e.reason());
      pending_.back().rest_of_file_lost = true;
      return;
    }
    text_bytes_ = text.size();
    // A UTF-8 byte-order mark is not JSON, but editors write it; the line readers drop it too.
    std::string_view json = text;
    if (json.starts_with("\xEF\xBB\xBF")) json.remove_prefix(3);
    if (is_blank(json)) return;  // no examples, as an empty file of any other format
    simdjson::dom::element root;
    auto err = parser_.parse(json.data(), json.size(), true).get(root);
    // As a JSON Lines row is: a document holding numbers simdjson refuses (1e400, NaN) is
    // parsed again as a copy with them set aside, and a field read where one stands names it.
    if (may_hold_numbers_simdjson_refuses(err)) {
      std::string quoted;  // the parsed document keeps its own copy of the strings
      err = parse_with_numbers_set_aside(json, err, parser_, quoted, root, set_aside_);
    }
    if (err) {
      std::string problem = err == simdjson::UTF8_ERROR
                                ? utf8_problem(text, "the file")
                                : std::string("malformed JSON: ") + simdjson::error_message(err);
      if (problem.empty()) problem = "malformed JSON: invalid UTF-8";
      if (starts_as_json_lines(json)) problem += kJsonLinesHint;
      fail_file(problem);
      return;
    }
    simdjson::dom::array data;
    if (root["data"].get_array().get(data)) {
      fail_file("not SQuAD JSON: no 'data' array at the top level");
      return;
    }
    size_t di = 0;
    for (simdjson::dom::element article : data) {
      simdjson::dom::array paragraphs;
      const std::string awhere = "data[" + std::to_string(di++) + "]";
      if (article["paragraphs"].get_array().get(paragraphs)) {
        fail(awhere, "missing field 'paragraphs' (an array)");
        continue;
      }
      size_t pi = 0;
      for (simdjson::dom::element para : paragraphs)
        read_paragraph(para, awhere + ".paragraphs[" + std::to_string(pi++) + "]");
    }
  }

  bool next(Example& ex) override {
    if (pending_.empty()) return false;
    ex = std::move(pending_.front());
    pending_.pop_front();
    return true;
  }
  uint64_t file_bytes_consumed() const override { return consumed_; }
  uint64_t text_bytes_read() const override { return text_bytes_; }

 private:
  void fail(const std::string& where, const std::string& problem) {
    Example ex;
    ex.file_index = file_index_;
    ex.where = where;
    ex.error = problem;
    pending_.push_back(std::move(ex));
  }

  // The file as a whole is not SQuAD: one JSON document, so none of it can be read.
  void fail_file(const std::string& problem) {
    fail("", problem);
    pending_.back().file_unusable = true;
  }

  void read_paragraph(simdjson::dom::element para, const std::string& where) {
    Example ex;
    ex.file_index = file_index_;
    ex.where = where;
    std::string_view context;
    simdjson::dom::array qas;
    if (read_string(para, "context", context, "missing field 'context' (a string)", ex.error) &&
        para["qas"].get_array().get(qas))
      ex.error = "missing field 'qas' (an array)";
    if (!ex.error.empty()) {
      pending_.push_back(std::move(ex));
      return;
    }
    ex.text.assign(context);
    size_t qi = 0;
    for (simdjson::dom::element qa : qas) {
      QaQuestion q;
      q.where = where + ".qas[" + std::to_string(qi++) + "]";
      q.example_index = next_question_++;
      read_question(qa, ex.text, q);
      ex.questions.push_back(std::move(q));
    }
    pending_.push_back(std::move(ex));
  }

  // The string at `key` of `object`, or false with `problem` saying why not: `missing` when
  // there is no string, or the number set aside (json_wide_numbers.h) that stands there.
  bool read_string(simdjson::dom::element object, std::string_view key, std::string_view& out,
                   std::string_view missing, std::string& problem) const {
    simdjson::dom::element e;
    if (object[key].get(e) || e.get_string().get(out)) {
      problem = missing;
      return false;
    }
    if (const auto number = number_set_aside(set_aside_, e)) {
      problem =
          "field '" + std::string(key) + "' is not a string but " + described_set_aside(*number);
      return false;
    }
    return true;
  }

  void read_question(simdjson::dom::element qa, const std::string& context, QaQuestion& q) const {
    std::string_view question;
    if (!read_string(qa, "question", question, "missing field 'question' (a string)", q.error))
      return;
    q.question.assign(question);
    bool impossible = false;
    if (auto flag = qa["is_impossible"]; flag.error() != simdjson::NO_SUCH_FIELD) {
      if (flag.get_bool().get(impossible)) {
        q.error = "field 'is_impossible' is not a boolean";
        return;
      }
    }
    q.impossible = impossible;
    simdjson::dom::array answers;
    if (qa["answers"].get_array().get(answers)) {
      if (impossible) return;
      q.error = "missing field 'answers' (an array)";
      return;
    }
    if (impossible) return;
    if (answers.size() == 0) {
      q.error = "no answers and not marked is_impossible";
      return;
    }
    simdjson::dom::element first = answers.at(0);
    std::string_view text;
    int64_t start;
    if (!read_string(first, "text", text, "answer has no 'text' string", q.error)) return;
    if (first["answer_start"].get_int64().get(start) || start < 0) {
      q.error = "answer has no non-negative integer 'answer_start'";
      return;
    }
    resolve_answer(context, text, start, q);
  }

  uint32_t file_index_;
  uint64_t consumed_ = 0;
  uint64_t text_bytes_ = 0;
  uint32_t next_question_ = 0;
  simdjson::dom::parser parser_;
  // Where the numbers simdjson refuses lie in the parsed document, set aside as strings
  // (ascending); empty for every document simdjson parses as it is.
  std::vector<const char*> set_aside_;
  std::deque<Example> pending_;
};

}  // namespace

void resolve_answer(const std::string& context, std::string_view text, int64_t answer_start,
                    QaQuestion& q) {
  auto byte = code_point_to_byte(context, static_cast<size_t>(answer_start));
  if (!byte || context.compare(*byte, text.size(), text) != 0) {
    q.error =
        "answer text does not match the context at answer_start " + std::to_string(answer_start);
    return;
  }
  if (is_blank(text)) {
    q.error = "empty answer text";
    return;
  }
  q.answer_text.assign(text);
  q.answer_start = *byte;
}

std::unique_ptr<ExampleReader> make_squad_reader(const std::filesystem::path& path,
                                                 uint32_t file_index, const ReaderOptions&) {
  return std::make_unique<SquadReader>(path, file_index);
}

}  // namespace shardkit::shardify
