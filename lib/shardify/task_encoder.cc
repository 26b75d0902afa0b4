#include "shardify/task_encoder.h"

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"

namespace shardkit::shardify {
namespace {

void add_error(const Example& ex, EncodedBatch& out, std::string reason, std::string where = {}) {
  out.errors.push_back(error_of(ex, std::move(reason), std::move(where)));
}

// Appends an encoding's ids (and type ids) as one row; returns it for the scalar fields.
EncodedRow& add_row(EncodedBatch& out, const tok::Encoding& e, bool segments) {
  EncodedRow row;
  row.first = static_cast<uint32_t>(out.ids.size());
  row.count = static_cast<uint32_t>(e.size());
  out.ids.insert(out.ids.end(), e.ids.begin(), e.ids.end());
  if (segments)
    for (size_t i = 0; i < e.size(); ++i)
      out.type_ids.push_back(i < e.type_ids.size() ? static_cast<uint8_t>(e.type_ids[i]) : 0);
  out.rows.push_back(row);
  return out.rows.back();
}

tok::Encoding slice(const tok::Encoding& e, size_t first, size_t last) {
  tok::Encoding s;
  auto cut = [&](const auto& v, auto& into) {
    if (v.size() == e.ids.size()) into.assign(v.begin() + first, v.begin() + last);
  };
  cut(e.ids, s.ids);
  cut(e.type_ids, s.type_ids);
  cut(e.offsets, s.offsets);
  cut(e.sequence_ids, s.sequence_ids);
  return s;
}

// A long text's ids are reserved once, for the most tokens it can have (every token covers at
// least one byte), so they never reallocate: growing by doubling would briefly hold them twice.
// Pages never written are never resident.
void reserve_for_text(std::vector<uint32_t>& ids, std::string_view text) {
  constexpr size_t kLongText = 4 << 20;
  if (text.size() > kLongText) ids.reserve(ids.size() + text.size() + 1);
}

std::string_view lstrip(std::string_view s) {
  while (!s.empty() &&
         (s.front() == ' ' || s.front() == '\t' || s.front() == '\n' || s.front() == '\r'))
    s.remove_prefix(1);
  return s;
}

// Ends a batch's rendering at its first bad example (stop_at_first_error).
struct FirstError {};

// A name without the blanks around it.
std::string_view trimmed(std::string_view name) {
  const size_t first = name.find_first_not_of(" \t");
  if (first == std::string_view::npos) return {};
  return name.substr(first, name.find_last_not_of(" \t") + 1 - first);
}

// Why a label is not one of those given (--labels): the names given (the first few, quoted where
// blanks around them would not show), and the name that is this label with blanks around it,
// which the list keeps ("--labels 'neg, pos'" names " pos"), since it splits at commas only.
// It names no flag, so that write_dataset, which gives labels as a keyword, says the same.
std::string unknown_label(const std::string& label, const std::vector<std::string>& names) {
  constexpr size_t kShown = 10;
  std::string listed;
  for (size_t i = 0; i < names.size() && i < kShown; ++i)
    listed += (i ? ", " : "") + (trimmed(names[i]) == names[i] ? names[i] : "'" + names[i] + "'");
  if (names.size() > kShown) listed += ", ... (" + std::to_string(names.size()) + " in all)";
  const std::string why = "unknown label '" + label + "' (the labels given: " + listed + ")";
  for (const std::string& name : names)
    if (name != label && trimmed(name) == label)
      return why + "; '" + name +
             "' has blanks around it: the list of labels is split at commas only, and its names "
             "kept whole";
  return why;
}

}  // namespace

TaskEncoder::TaskEncoder(const tok::Tokenizer& tokenizer, const TaskOptions& options,
                         const LabelMap* labels, const ChatRenderer* renderer,
                         bool stop_at_first_error)
    : tok_(tokenizer),
      options_(options),
      labels_(labels),
      renderer_(renderer),
      stop_at_first_error_(stop_at_first_error) {
  const auto& sp = tok_.special_tokens();
  padding_id_ = sp.pad.value_or(0);
  separator_ = sp.eos ? sp.eos : sp.sep;
  const size_t added = tok_.added_tokens(task_has_segments(options.task));
  if (!options.packing() && options.max_len <= added)
    throw Error(ErrorCode::kInvalidArgument, "",
                "--max-len " + std::to_string(options.max_len) +
                    " leaves no room beside the tokenizer's " + std::to_string(added) +
                    " special tokens");
  if (options.task == Task::kSft) {
    if (options.messages && !renderer)
      throw Error(ErrorCode::kInvalidArgument, "",
                  "--messages-field needs --chat-template (a tokenizer_config.json) to render "
                  "conversations");
    if (!renderer && !separator_)
      throw Error(ErrorCode::kInvalidArgument, "",
                  "prompt + response without --chat-template ends with the tokenizer's "
                  "end-of-text token, and this tokenizer has none; pass --chat-template");
    return;
  }
  if (options.packing() && !separator_)
    throw Error(
        ErrorCode::kInvalidArgument, "",
        "the tokenizer has no end-of-text or separator token to join documents; use --no-pack");
  if (options.task == Task::kQa) {
    if (options.max_query_len == 0)
      throw Error(ErrorCode::kInvalidArgument, "", "--max-query-len must be positive");
    const int64_t context_room =
        int64_t{options.max_len} - options.max_query_len - static_cast<int64_t>(added);
    if (context_room <= int64_t{options.doc_stride})
      throw Error(ErrorCode::kInvalidArgument, "",
                  "--max-len " + std::to_string(options.max_len) + " minus --max-query-len " +
                      std::to_string(options.max_query_len) + " and " + std::to_string(added) +
                      " special tokens leaves " + std::to_string(context_room) +
                      " context tokens, which must exceed --doc-stride " +
                      std::to_string(options.doc_stride));
  }
}

bool TaskEncoder::label_index(const Example& ex, EncodedBatch& out, int32_t& index) const {
  if (ex.label.empty()) {  // an empty CSV cell, or "": a missing label, not a class named ""
    add_error(ex, out, "the label is empty");
    return false;
  }
  auto i = labels_->index(ex.label);
  if (!i) {
    add_error(ex, out, unknown_label(ex.label, labels_->names()));
    return false;
  }
  index = *i;
  return true;
}

void TaskEncoder::encode(const std::vector<Example>& examples, EncodedBatch& out) const {
  if (options_.task != Task::kSft || !renderer_) {
    for (const Example& ex : examples) encode(ex, out, nullptr);
    return;
  }
  std::vector<std::string> requests;
  std::vector<size_t> request_of(examples.size(), SIZE_MAX);
  for (size_t i = 0; i < examples.size(); ++i) {
    if (!examples[i].error.empty()) continue;
    if (std::optional<std::string> m = sft_messages(examples[i])) {
      request_of[i] = requests.size();
      requests.push_back(std::move(*m));
    }
  }
  // In order: the examples without a conversation to render come before the next rendered one.
  std::vector<size_t> example_of(requests.size());
  for (size_t i = 0; i < examples.size(); ++i)
    if (request_of[i] != SIZE_MAX) example_of[request_of[i]] = i;
  size_t next = 0;
  const size_t errors_before = out.errors.size();
  const auto stop = [&] { return stop_at_first_error_ && out.errors.size() > errors_before; };
  auto encode_unrendered = [&](size_t end) {
    for (; next < end && !stop(); ++next)
      if (request_of[next] == SIZE_MAX) encode(examples[next], out, nullptr);
  };
  try {
    renderer_->render(requests, [&](size_t request, RenderedChat&& chat) {
      const size_t i = example_of[request];
      encode_unrendered(i);
      if (!stop()) encode(examples[i], out, &chat);
      next = i + 1;
      // Thrown through render(), which kills the renderer still working on the rest.
      if (stop()) throw FirstError{};
    });
  } catch (const FirstError&) {
    return;
  }
  encode_unrendered(examples.size());
}

void TaskEncoder::encode(const Example& ex, EncodedBatch& out, const RenderedChat* chat) const {
  if (!ex.error.empty()) {
    add_error(ex, out, ex.error);
    return;
  }
  try {
    int32_t label = 0;
    switch (options_.task) {
      case Task::kLm:
        if (options_.packing())
          encode_document(ex, out);
        else
          encode_single(ex, out, "empty document (no tokens)", 0);
        break;
      case Task::kCls:
        if (label_index(ex, out, label)) encode_single(ex, out, "empty text (no tokens)", label);
        break;
      case Task::kPair:
        encode_pair(ex, out);
        break;
      case Task::kQa:
        encode_qa(ex, out);
        break;
      case Task::kSft:
        encode_sft(ex, out, chat);
        break;
    }
  } catch (const Error& e) {
    if (e.code() != ErrorCode::kInput && e.code() != ErrorCode::kInvalidArgument) throw;
    add_error(ex, out, e.reason());
  }
}

// The Packer counts the documents (their parts' tokens together).
void TaskEncoder::encode_document(const Example& ex, EncodedBatch& out) const {
  const size_t before = out.ids.size();
  const std::string_view text = ex.body();
  reserve_for_text(out.ids, text);
  if (ex.after_cut) {
    tok_.encode_ids_after_cut(text, out.ids);
  } else {
    tok_.encode_ids(text, out.ids);
  }
  const size_t n = out.ids.size() - before;
  // (A part of a long document ends and starts with characters that make tokens, text_cuts.h.)
  if (n == 0) {
    add_error(ex, out, "empty document (no tokens)");
    return;
  }
  if (!ex.continues) out.ids.push_back(*separator_);
  EncodedRow row{static_cast<uint32_t>(before), static_cast<uint32_t>(out.ids.size() - before)};
  row.continues = ex.continues;
  out.rows.push_back(row);
}

void TaskEncoder::encode_single(const Example& ex, EncodedBatch& out, const char* empty_reason,
                                int32_t label) const {
  // Ids only: a full Encoding (offsets, word and type ids) costs 21 bytes a token, five times
  // the ids, for tokens that truncation mostly drops (a 200 MB line: over 1 GB).
  tok::Encoding e;
  reserve_for_text(e.ids, ex.body());
  tok_.encode_ids(ex.body(), e.ids);
  const size_t tokens = e.size();
  if (tokens == 0) {
    add_error(ex, out, empty_reason);
    return;
  }
  const size_t room = options_.max_len - tok_.added_tokens(false);
  ++out.stats.examples;
  ++out.stats.length_histogram[length_bucket(tokens + tok_.added_tokens(false))];
  if (tokens > room) {
    e.ids.resize(room);
    e.ids.shrink_to_fit();
    ++out.stats.truncated;
  }
  add_row(out, tok_.post_process(std::move(e), std::nullopt), false).label = label;
}

void TaskEncoder::encode_pair(const Example& ex, EncodedBatch& out) const {
  int32_t label;
  if (!label_index(ex, out, label)) return;
  tok::Encoding a = tok_.encode(ex.text);
  tok::Encoding b = tok_.encode(ex.text_pair);
  if (a.size() == 0 || b.size() == 0) {
    add_error(ex, out,
              a.size() == 0 ? "empty first text (no tokens)" : "empty second text (no tokens)");
    return;
  }
  const size_t added = tok_.added_tokens(true);
  const size_t room = options_.max_len - added;
  ++out.stats.examples;
  ++out.stats.length_histogram[length_bucket(a.size() + b.size() + added)];
  if (a.size() + b.size() > room) {
    // With max_length, truncation also reproduces HF's early stop, which decides which text
    // loses the odd token under longest_first.
    tok::truncate_pair(a, b, room, tok::TruncationStrategy::kLongestFirst, options_.max_len);
    ++out.stats.truncated;
  }
  add_row(out, tok_.post_process(std::move(a), std::move(b)), true).label = label;
}

void TaskEncoder::encode_qa(const Example& ex, EncodedBatch& out) const {
  tok::Encoding context = tok_.encode(ex.text);
  const size_t added = tok_.added_tokens(true);
  for (const QaQuestion& q : ex.questions) {
    if (!q.error.empty()) {
      add_error(ex, out, q.error, q.where);
      continue;
    }
    tok::Encoding question;
    try {
      question = tok_.encode(lstrip(q.question));
    } catch (const Error& e) {
      if (e.code() != ErrorCode::kInput) throw;
      add_error(ex, out, e.reason(), q.where);
      continue;
    }
    if (question.size() == 0 || context.size() == 0) {
      add_error(ex, out,
                question.size() == 0 ? "empty question (no tokens)" : "empty context (no tokens)",
                q.where);
      continue;
    }
    ++out.stats.examples;
    ++out.stats.length_histogram[length_bucket(question.size() + context.size() + added)];
    if (question.size() > options_.max_query_len) tok::truncate(question, options_.max_query_len);
    // Windows as HF's overflowing truncation makes them: starts 0, step, 2*step, ... until a
    // window reaches the end; consecutive windows share doc_stride tokens.
    const size_t room = options_.max_len - question.size() - added;
    const size_t step = room - options_.doc_stride;
    if (context.size() > room) ++out.stats.truncated;
    const size_t answer_end = q.answer_start + q.answer_text.size();
    for (size_t start = 0;; start += step) {
      const size_t stop = std::min(start + room, context.size());
      tok::Encoding p = tok_.post_process(question, slice(context, start, stop));
      int32_t s_pos = 0, e_pos = 0;
      if (!q.impossible) {
        // Context tokens are those with sequence id 1; the answer must lie inside them.
        size_t first = p.size(), last = 0;
        for (size_t i = 0; i < p.size(); ++i)
          if (p.sequence_ids[i] == 1) {
            first = std::min(first, i);
            last = i;
          }
        if (first <= last && p.offsets[first].first <= q.answer_start &&
            p.offsets[last].second >= answer_end) {
          size_t s = first;
          while (s + 1 <= last && p.offsets[s + 1].first <= q.answer_start) ++s;
          size_t e = last;
          while (e > first && p.offsets[e - 1].second >= answer_end) --e;
          s_pos = static_cast<int32_t>(s);
          e_pos = static_cast<int32_t>(e);
        }
      }
      if (s_pos == 0 && e_pos == 0) ++out.stats.qa_unanswerable_windows;
      EncodedRow& row = add_row(out, p, true);
      row.start_position = s_pos;
      row.end_position = e_pos;
      row.example_index = q.example_index;
      row.source_index = ex.file_index;
      if (stop == context.size()) break;
    }
  }
}

}  // namespace shardkit::shardify
