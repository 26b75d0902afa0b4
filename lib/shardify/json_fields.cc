#include "shardify/json_fields.h"

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>

#include "shardify/json_wide_numbers.h"
#include "shardify/readers_internal.h"

namespace shardkit::shardify {
namespace {

// Whether `key` names two fields of `obj`: Python's json keeps the last value and simdjson the
// first, so which one was meant would be a guess.
bool key_repeats(simdjson::dom::object obj, std::string_view key) {
  int seen = 0;
  for (const simdjson::dom::key_value_pair field : obj)
    if (field.key == key && ++seen == 2) return true;
  return false;
}

// Follows a dotted path through nested objects. Sets `problem` when a step is missing or repeated.
simdjson::dom::element lookup(simdjson::dom::element root, const std::string& path,
                              std::string& problem) {
  simdjson::dom::element cur = root;
  size_t start = 0;
  while (start <= path.size()) {
    size_t dot = path.find('.', start);
    std::string_view key(path.data() + start,
                         (dot == std::string::npos ? path.size() : dot) - start);
    simdjson::dom::object obj;
    if (cur.get_object().get(obj) != simdjson::SUCCESS) {
      problem = "field '" + path + "' not found (not an object at '" + std::string(key) + "')";
      return {};
    }
    if (obj.at_key(key).get(cur) != simdjson::SUCCESS) {
      problem = "missing field '" + path + "'";
      simdjson::dom::element flat;
      if (start == 0 && dot != std::string::npos && obj.at_key(path).get(flat) == simdjson::SUCCESS)
        problem +=
            " (a dotted path names nested fields; a key with a dot in its name, like this "
            "row's, cannot be selected)";
      return {};
    }
    if (key_repeats(obj, key)) {
      problem = "key '" + std::string(key) + "' appears twice" +
                (key.size() == path.size() ? "" : " on the path of field '" + path + "'");
      return {};
    }
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  return cur;
}

// The two-character escape JSON has for a control character, or 0 when it has none.
char short_escape(char c) {
  switch (c) {
    case '\b':
      return 'b';
    case '\t':
      return 't';
    case '\n':
      return 'n';
    case '\f':
      return 'f';
    case '\r':
      return 'r';
    default:
      return 0;
  }
}

// `s` as a JSON string, escaped as simdjson::minify escapes it.
void append_json_string(std::string_view s, std::string& out) {
  static constexpr char kHex[] = "0123456789abcdef";
  out += '"';
  for (const char c : s) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (byte >= 0x20) {
      out += c;
    } else if (const char escape = short_escape(c)) {
      out += '\\';
      out += escape;
    } else {
      out += "\\u00";
      out += kHex[byte >> 4];
      out += kHex[byte & 15];
    }
  }
  out += '"';
}

}  // namespace

void JsonFields::parse(std::string_view json) {
  set_aside_numbers_.clear();
  error_ = parser_.parse(json.data(), json.size(), false).get(root_);
  if (may_hold_numbers_simdjson_refuses(error_))
    error_ =
        parse_with_numbers_set_aside(json, error_, parser_, quoted_, root_, set_aside_numbers_);
}

std::optional<std::string_view> JsonFields::set_aside_number(simdjson::dom::element e) const {
  return number_set_aside(set_aside_numbers_, e);
}

std::string JsonFields::set_aside_note(
    std::string_view lead,
    std::initializer_list<simdjson::simdjson_result<simdjson::dom::element>> found) const {
  for (const auto& result : found) {
    simdjson::dom::element e;
    if (result.get(e) != simdjson::SUCCESS) continue;
    if (const auto number = set_aside_number(e))
      return std::string(lead) + described_set_aside(*number);
  }
  return {};
}

bool JsonFields::read_string(simdjson::dom::element e, std::string_view& out) const {
  return e.get_string().get(out) == simdjson::SUCCESS && !set_aside_number(e);
}

std::string JsonFields::minify(simdjson::dom::element e) const {
  if (set_aside_numbers_.empty()) return simdjson::minify(e);
  std::string out;
  write_json(e, out);
  return out;
}

void JsonFields::write_json(simdjson::dom::element e, std::string& out) const {
  if (const auto number = set_aside_number(e)) {
    out += *number;
    return;
  }
  simdjson::dom::array items;
  simdjson::dom::object fields;
  char separator = 0;
  if (e.get_array().get(items) == simdjson::SUCCESS) {
    out += '[';
    for (simdjson::dom::element item : items) {
      if (separator) out += separator;
      separator = ',';
      write_json(item, out);
    }
    out += ']';
  } else if (e.get_object().get(fields) == simdjson::SUCCESS) {
    out += '{';
    for (simdjson::dom::key_value_pair field : fields) {
      if (separator) out += separator;
      separator = ',';
      append_json_string(field.key, out);
      out += ':';
      write_json(field.value, out);
    }
    out += '}';
  } else {
    out += simdjson::minify(e);
  }
}

namespace {

// The line reader ends lines at \n only: a file with CR line endings is one line, whose JSON
// error ("improper structure") says nothing of why. A raw \r is never inside a valid JSON string.
std::string carriage_return_hint(std::string_view json) {
  if (json.find('\r') == std::string_view::npos) return "";
  return " (the line holds carriage returns (\\r) that end no line: if the file uses CR line "
         "endings (classic Mac OS), which are not read, convert them to \\n first (tr '\\r' "
         "'\\n'))";
}

}  // namespace

void JsonFields::read(std::string_view json, Example& ex, bool lend_text) {
  if (error_) {
    ex.error = error_ == simdjson::UTF8_ERROR
                   ? utf8_problem(json, "the line")
                   : std::string("malformed JSON: ") + simdjson::error_message(error_);
    if (ex.error.empty()) ex.error = "malformed JSON: invalid UTF-8";
    if (error_ != simdjson::UTF8_ERROR) ex.error += carriage_return_hint(json);
    return;
  }
  if (!root_.is_object()) {
    ex.error = "malformed JSON: the line is not a JSON object";
    return;
  }
  if (options_.qa) {
    read_qa(root_, ex);
    return;
  }
  if (!options_.messages_field.empty()) {
    read_messages(root_, ex);
    return;
  }
  std::string_view lent;
  if (!options_.labels_only) {
    std::string_view text;
    if (!string_field(root_, options_.text_field, text, ex.error)) return;
    if (lend_text && options_.pair_field.empty())
      lent = text;
    else
      ex.text.assign(text);
    if (!options_.pair_field.empty() &&
        !string_field(root_, options_.pair_field, ex.text_pair, ex.error))
      return;
  }
  if (!options_.label_field.empty()) label_field(root_, ex);
  if (!lent.empty()) lend(lent, ex);  // last: root_ points into the document that moves
}

bool JsonFields::string_field(simdjson::dom::element root, const std::string& path,
                              std::string_view& out, std::string& problem) {
  simdjson::dom::element e = lookup(root, path, problem);
  if (!problem.empty()) return false;
  if (!read_string(e, out)) {
    problem = "field '" + path + "' is not a string" +
              set_aside_note(" but ", {simdjson::dom::element(e)});
    return false;
  }
  return true;
}

bool JsonFields::string_field(simdjson::dom::element root, const std::string& path,
                              std::string& out, std::string& problem) {
  std::string_view s;
  if (!string_field(root, path, s, problem)) return false;
  out.assign(s);
  return true;
}

// The strings lie in a buffer the parser owns through a pointer, so they stay where they are
// when the parser moves; padding follows them (the buffer holds 5/3 of the JSON's length).
void JsonFields::lend(std::string_view text, Example& ex) {
  ex.text_view = text;
  ex.text_owner = std::make_shared<const simdjson::dom::parser>(std::move(parser_));
  release_buffers();  // the next line starts a new document
}

// Every message an object with a string role and a string, null or list content (multimodal
// parts); other keys (tool_calls, reasoning_content) pass through to the template untouched.
void JsonFields::read_messages(simdjson::dom::element root, Example& ex) {
  simdjson::dom::element e = lookup(root, options_.messages_field, ex.error);
  if (!ex.error.empty()) return;
  simdjson::dom::array messages;
  if (e.get_array().get(messages) != simdjson::SUCCESS) {
    ex.error = "field '" + options_.messages_field + "' is not a list of messages";
    return;
  }
  size_t i = 0;
  for (simdjson::dom::element m : messages) {
    const std::string at = options_.messages_field + "[" + std::to_string(i++) + "]";
    simdjson::dom::element role, content;
    std::string_view role_name;
    if (!m.is_object() || m["role"].get(role) || !read_string(role, role_name)) {
      ex.error = at + " needs a string 'role'" + set_aside_note(", not ", {m["role"]});
      return;
    }
    if (m["content"].get(content) || set_aside_number(content) ||
        !(content.is_string() || content.is_null() || content.is_array())) {
      ex.error = at + " needs a 'content' that is a string, null or a list" +
                 set_aside_note(", not ", {m["content"]});
      return;
    }
  }
  ex.messages = minify(e);
}

void JsonFields::read_qa(simdjson::dom::element root, Example& ex) {
  QaQuestion q;
  q.example_index = next_question_++;
  if (!string_field(root, options_.text_field, ex.text, ex.error)) return;
  if (!string_field(root, options_.question_field, q.question, ex.error)) return;
  simdjson::dom::element answers = lookup(root, options_.answers_field, ex.error);
  if (!ex.error.empty()) return;
  // HF datasets: {"text": [...], "answer_start": [...]}; SQuAD: [{"text", "answer_start"}].
  simdjson::dom::array texts, starts, list;
  simdjson::dom::element answer_text;
  std::string_view text;
  int64_t start = -1;
  bool any = false;
  if (answers.get_object().error() == simdjson::SUCCESS) {
    if (answers["text"].get_array().get(texts) || answers["answer_start"].get_array().get(starts) ||
        texts.size() != starts.size()) {
      ex.error = "field '" + options_.answers_field +
                 "' needs equally long 'text' and 'answer_start' lists";
      return;
    }
    if ((any = texts.size() > 0) &&
        (texts.at(0).get(answer_text) || !read_string(answer_text, text) ||
         starts.at(0).get_int64().get(start) || start < 0)) {
      ex.error =
          "the first answer needs a 'text' string and a non-negative integer "
          "'answer_start'" +
          set_aside_note(", not ", {texts.at(0), starts.at(0)});
      return;
    }
  } else if (answers.get_array().get(list) == simdjson::SUCCESS) {
    if ((any = list.size() > 0)) {
      simdjson::dom::element first = list.at(0);
      if (first["text"].get(answer_text) || !read_string(answer_text, text) ||
          first["answer_start"].get_int64().get(start) || start < 0) {
        ex.error =
            "the first answer needs a 'text' string and a non-negative integer 'answer_start'" +
            set_aside_note(", not ", {first["text"], first["answer_start"]});
        return;
      }
    }
  } else {
    ex.error = "field '" + options_.answers_field + "' is neither an object nor a list";
    return;
  }
  if (any)
    resolve_answer(ex.text, text, start, q);
  else
    q.impossible = true;
  ex.questions.push_back(std::move(q));
}

namespace {

// An integer written as a float: pandas writes an integer column holding a missing value so.
bool whole_number(double d) { return std::trunc(d) == d && std::fabs(d) < 0x1p53; }

// What a label's value is, for the message that refuses it.
std::string json_kind(simdjson::dom::element e) {
  switch (e.type()) {
    case simdjson::dom::element_type::NULL_VALUE:
      return "null";
    case simdjson::dom::element_type::ARRAY:
      return "an array";
    case simdjson::dom::element_type::OBJECT:
      return "an object";
    default:
      return simdjson::minify(e);
  }
}

}  // namespace

void JsonFields::label_field(simdjson::dom::element root, Example& ex) {
  simdjson::dom::element e = lookup(root, options_.label_field, ex.error);
  if (!ex.error.empty()) return;
  if (const std::string note = set_aside_note(", not ", {simdjson::dom::element(e)});
      !note.empty()) {
    ex.error = "label field '" + options_.label_field +
               "' must be a string, an integer or a boolean" + note;
    return;
  }
  std::string_view s;
  int64_t i;
  uint64_t u;
  bool b;
  if (e.get_string().get(s) == simdjson::SUCCESS) {
    ex.label.assign(s);
  } else if (e.get_int64().get(i) == simdjson::SUCCESS) {
    ex.label = std::to_string(i);
  } else if (e.get_uint64().get(u) == simdjson::SUCCESS) {
    ex.label = std::to_string(u);
  } else if (e.get_bool().get(b) == simdjson::SUCCESS) {
    ex.label = b ? "true" : "false";
  } else if (double d; e.get_double().get(d) == simdjson::SUCCESS && whole_number(d)) {
    ex.label = std::to_string(static_cast<int64_t>(d));
  } else {
    ex.error = "label field '" + options_.label_field +
               "' must be a string, an integer or a boolean, not " + json_kind(e);
  }
}

void read_unread_json(std::vector<Example>& examples, const ReaderOptions& options) {
  std::optional<JsonFields> fields;  // one parser a batch, made for its first unread line
  for (Example& ex : examples) {
    if (!ex.json_unread) continue;
    if (!fields) fields.emplace(options);
    fields->parse(ex.text_view);
    fields->read(ex.text_view, ex);
    ex.json_unread = false;
    // The fields were copied out of the line: it was the file's if the file did not shrink
    // meanwhile.
    if (ex.text_file) ex.text_file->check_intact();
    ex.text_file.reset();
    ex.text_owner.reset();
    ex.text_view = {};
  }
}

}  // namespace shardkit::shardify
