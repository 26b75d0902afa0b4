#include "shardify/record_builder.h"

#include <simdjson.h>

#include <algorithm>
#include <cstring>

#include "core/error.h"
#include "format/shard_format.h"

namespace shardkit::shardify {

Task parse_task(const std::string& name) {
  if (name == "lm") return Task::kLm;
  if (name == "cls") return Task::kCls;
  if (name == "pair") return Task::kPair;
  if (name == "qa") return Task::kQa;
  throw Error(ErrorCode::kInvalidArgument, "",
              "unknown task '" + name + "' (expected lm, cls, pair or qa)");
}

const char* task_name(Task task) {
  switch (task) {
    case Task::kLm:
      return "lm";
    case Task::kCls:
      return "cls";
    case Task::kPair:
      return "pair";
    case Task::kQa:
      return "qa";
  }
  return "?";
}

size_t length_bucket(uint64_t length) {
  size_t b = 0;
  while (length >= 2 && b + 1 < kLengthBuckets) {
    length >>= 1;
    ++b;
  }
  return b;
}

void ConvertStats::add(const ConvertStats& o) {
  examples += o.examples;
  records += o.records;
  tokens += o.tokens;
  truncated += o.truncated;
  skipped += o.skipped;
  qa_unanswerable_windows += o.qa_unanswerable_windows;
  for (size_t i = 0; i < kLengthBuckets; ++i) length_histogram[i] += o.length_histogram[i];
}

std::string ConvertStats::to_json() const {
  std::string o =
      "{\"examples\":" + std::to_string(examples) + ",\"records\":" + std::to_string(records) +
      ",\"tokens\":" + std::to_string(tokens) + ",\"truncated\":" + std::to_string(truncated) +
      ",\"skipped\":" + std::to_string(skipped) +
      ",\"qa_unanswerable_windows\":" + std::to_string(qa_unanswerable_windows) +
      ",\"length_histogram_log2\":[";
  for (size_t i = 0; i < kLengthBuckets; ++i)
    o += (i ? "," : "") + std::to_string(length_histogram[i]);
  return o + "]}";
}

ConvertStats ConvertStats::from_json(const std::string& json, const std::string& where) {
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  auto bad = [&] {
    return Error(ErrorCode::kCorrupt, where,
                 "metadata 'stats' is not shardify's statistics object");
  };
  if (parser.parse(json).get(root)) throw bad();
  ConvertStats s;
  auto get = [&](const char* key, uint64_t& v) {
    if (root[key].get_uint64().get(v)) throw bad();
  };
  get("examples", s.examples);
  get("records", s.records);
  get("tokens", s.tokens);
  get("truncated", s.truncated);
  get("skipped", s.skipped);
  get("qa_unanswerable_windows", s.qa_unanswerable_windows);
  simdjson::dom::array hist;
  if (root["length_histogram_log2"].get_array().get(hist) || hist.size() != kLengthBuckets)
    throw bad();
  size_t i = 0;
  for (auto v : hist)
    if (v.get_uint64().get(s.length_histogram[i++])) throw bad();
  return s;
}

// ---------------------------------------------------------------------------------------------

RecordLayout::RecordLayout(const TaskOptions& o, size_t vocab_size) : max_len_(o.max_len) {
  if (o.max_len < 2 || o.max_len > (1u << 20))
    throw Error(ErrorCode::kInvalidArgument, "", "--max-len must be in 2..1048576");
  token_dtype_ = vocab_size < 65536 ? DType::kU16 : DType::kI32;
  std::vector<Field> f;
  f.push_back({"input_ids", token_dtype_, {o.max_len}, 0});
  if (o.task == Task::kPair || o.task == Task::kQa)
    f.push_back({"token_type_ids", DType::kU8, {o.max_len}, 0});
  if (o.task == Task::kLm && o.pack && o.position_ids)
    f.push_back({"position_ids", DType::kU16, {o.max_len}, 0});
  f.push_back({"length", DType::kU32, {}, 0});
  if (o.task == Task::kCls || o.task == Task::kPair) f.push_back({"labels", DType::kI32, {}, 0});
  if (o.task == Task::kQa) {
    f.push_back({"start_positions", DType::kI32, {}, 0});
    f.push_back({"end_positions", DType::kI32, {}, 0});
    f.push_back({"example_index", DType::kU32, {}, 0});
    f.push_back({"source_index", DType::kU32, {}, 0});
  }
  schema_ = Schema(std::move(f));
  ids_offset_ = schema_.at("input_ids").offset;
  if (const Field* t = schema_.find("token_type_ids")) type_ids_offset_ = t->offset;
}

void RecordLayout::put_tokens(unsigned char* record, std::span<const uint32_t> ids,
                              std::span<const uint32_t> type_ids, uint32_t pad_id) const {
  unsigned char* p = record + ids_offset_;
  const size_t n = std::min<size_t>(ids.size(), max_len_);
  if (token_dtype_ == DType::kU16) {
    for (size_t i = 0; i < n; ++i) {
      p[2 * i] = static_cast<unsigned char>(ids[i]);
      p[2 * i + 1] = static_cast<unsigned char>(ids[i] >> 8);
    }
    for (size_t i = n; i < max_len_; ++i) format::store_le(p + 2 * i, pad_id, 2);
  } else {
    for (size_t i = 0; i < max_len_; ++i) format::store_le(p + 4 * i, i < n ? ids[i] : pad_id, 4);
  }
  if (type_ids_offset_) {
    unsigned char* q = record + *type_ids_offset_;
    for (uint32_t i = 0; i < max_len_; ++i)
      q[i] = i < type_ids.size() ? static_cast<unsigned char>(type_ids[i]) : 0;
  }
}

void RecordLayout::put_u32(unsigned char* record, const char* field, uint32_t value) const {
  format::store_le(record + schema_.at(field).offset, value, 4);
}

void RecordLayout::put_i32(unsigned char* record, const char* field, int32_t value) const {
  format::store_le(record + schema_.at(field).offset, static_cast<uint32_t>(value), 4);
}

void RecordLayout::put_position_ids(unsigned char* record,
                                    std::span<const uint16_t> positions) const {
  unsigned char* p = record + schema_.at("position_ids").offset;
  for (uint32_t i = 0; i < max_len_; ++i)
    format::store_le(p + 2 * i, i < positions.size() ? positions[i] : 0, 2);
}

// ---------------------------------------------------------------------------------------------

TaskEncoder::TaskEncoder(const tok::Tokenizer& tokenizer, const RecordLayout& layout,
                         const TaskOptions& options, const LabelMap* labels)
    : tok_(tokenizer), layout_(layout), options_(options), labels_(labels) {
  const auto& sp = tok_.special_tokens();
  pad_id_ = sp.pad.value_or(0);
  separator_ = sp.eos ? sp.eos : sp.sep;
  const size_t added = tok_.added_tokens(options.task == Task::kPair || options.task == Task::kQa);
  if (options.task != Task::kLm || !options.pack) {
    if (options.max_len <= added)
      throw Error(ErrorCode::kInvalidArgument, "",
                  "--max-len leaves no room beside the special tokens");
  }
  if (options.task == Task::kLm && options.pack && !separator_)
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

unsigned char* TaskEncoder::new_record(BatchOutput& out) const {
  const size_t rs = layout_.record_size();
  out.records.resize(out.records.size() + rs);
  ++out.record_count;
  ++out.stats.records;
  unsigned char* r = out.records.data() + out.records.size() - rs;
  std::memset(r, 0, rs);
  return r;
}

static void add_error(const Example& ex, BatchOutput& out, std::string reason,
                      std::string where = {}) {
  out.errors.push_back(
      {ex.file_index, ex.line, where.empty() ? ex.where : std::move(where), std::move(reason)});
}

bool TaskEncoder::label_index(const Example& ex, BatchOutput& out, int32_t& index) const {
  auto i = labels_->index(ex.label);
  if (!i) {
    add_error(ex, out, "unknown label '" + ex.label + "'");
    return false;
  }
  index = *i;
  return true;
}

void TaskEncoder::encode(const Example& ex, BatchOutput& out) const {
  if (!ex.error.empty()) {
    add_error(ex, out, ex.error);
    return;
  }
  try {
    switch (options_.task) {
      case Task::kLm:
        encode_lm(ex, out);
        break;
      case Task::kCls:
        encode_cls(ex, out);
        break;
      case Task::kPair:
        encode_pair(ex, out);
        break;
      case Task::kQa:
        encode_qa(ex, out);
        break;
    }
  } catch (const Error& e) {
    if (e.code() != ErrorCode::kInput && e.code() != ErrorCode::kInvalidArgument) throw;
    add_error(ex, out, e.reason());
  }
}

void TaskEncoder::encode_lm(const Example& ex, BatchOutput& out) const {
  if (options_.pack) {
    const size_t before = out.lm_ids.size();
    tok_.encode_ids(ex.text, out.lm_ids);
    const size_t n = out.lm_ids.size() - before;
    if (n == 0) {
      add_error(ex, out, "empty document (no tokens)");
      return;
    }
    out.lm_ids.push_back(*separator_);
    out.lm_doc_ends.push_back(static_cast<uint32_t>(out.lm_ids.size()));
    ++out.stats.examples;
    ++out.stats.length_histogram[length_bucket(n + 1)];
    return;
  }
  encode_single(ex, out, "empty document (no tokens)");
}

void TaskEncoder::encode_cls(const Example& ex, BatchOutput& out) const {
  int32_t label;
  if (!label_index(ex, out, label)) return;
  if (unsigned char* r = encode_single(ex, out, "empty text (no tokens)"))
    layout_.put_i32(r, "labels", label);
}

unsigned char* TaskEncoder::encode_single(const Example& ex, BatchOutput& out,
                                          const char* empty_reason) const {
  tok::Encoding e = tok_.encode(ex.text);
  if (e.size() == 0) {
    add_error(ex, out, empty_reason);
    return nullptr;
  }
  const size_t room = options_.max_len - tok_.added_tokens(false);
  ++out.stats.examples;
  ++out.stats.length_histogram[length_bucket(e.size() + tok_.added_tokens(false))];
  if (e.size() > room) {
    tok::truncate(e, room);
    ++out.stats.truncated;
  }
  tok::Encoding p = tok_.post_process(std::move(e), std::nullopt);
  unsigned char* r = new_record(out);
  layout_.put_tokens(r, p.ids, p.type_ids, pad_id_);
  layout_.put_u32(r, "length", static_cast<uint32_t>(p.size()));
  out.stats.tokens += p.size();
  return r;
}

void TaskEncoder::encode_pair(const Example& ex, BatchOutput& out) const {
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
  tok::Encoding p = tok_.post_process(std::move(a), std::move(b));
  unsigned char* r = new_record(out);
  layout_.put_tokens(r, p.ids, p.type_ids, pad_id_);
  layout_.put_u32(r, "length", static_cast<uint32_t>(p.size()));
  layout_.put_i32(r, "labels", label);
  out.stats.tokens += p.size();
}

namespace {

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

std::string_view lstrip(std::string_view s) {
  while (!s.empty() &&
         (s.front() == ' ' || s.front() == '\t' || s.front() == '\n' || s.front() == '\r'))
    s.remove_prefix(1);
  return s;
}

}  // namespace

void TaskEncoder::encode_qa(const Example& ex, BatchOutput& out) const {
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
      unsigned char* r = new_record(out);
      layout_.put_tokens(r, p.ids, p.type_ids, pad_id_);
      layout_.put_u32(r, "length", static_cast<uint32_t>(p.size()));
      layout_.put_i32(r, "start_positions", s_pos);
      layout_.put_i32(r, "end_positions", e_pos);
      layout_.put_u32(r, "example_index", q.example_index);
      layout_.put_u32(r, "source_index", ex.file_index);
      out.stats.tokens += p.size();
      if (stop == context.size()) break;
    }
  }
}

// ---------------------------------------------------------------------------------------------

Packer::Packer(const RecordLayout& layout, const TaskOptions& options, uint32_t pad_id)
    : layout_(layout), options_(options), pad_id_(pad_id) {
  window_.reserve(options.max_len);
}

void Packer::add(const std::vector<uint32_t>& ids, const std::vector<uint32_t>& doc_ends,
                 std::vector<unsigned char>& records, size_t& record_count, ConvertStats& stats) {
  size_t i = 0;
  for (uint32_t end : doc_ends) {
    while (i < end) {  // one document, possibly across windows
      const size_t take = std::min<size_t>(end - i, options_.max_len - window_.size());
      window_.insert(window_.end(), ids.begin() + i, ids.begin() + i + take);
      if (options_.position_ids)
        for (size_t k = 0; k < take; ++k) positions_.push_back(static_cast<uint16_t>(position_++));
      i += take;
      if (window_.size() == options_.max_len) emit(records, record_count, stats);
    }
    position_ = 0;
  }
}

void Packer::flush(std::vector<unsigned char>& records, size_t& record_count, ConvertStats& stats) {
  if (!window_.empty()) emit(records, record_count, stats);
  position_ = 0;
}

void Packer::emit(std::vector<unsigned char>& records, size_t& record_count, ConvertStats& stats) {
  const size_t rs = layout_.record_size();
  records.resize(records.size() + rs);
  unsigned char* r = records.data() + records.size() - rs;
  std::memset(r, 0, rs);
  layout_.put_tokens(r, window_, {}, pad_id_);
  layout_.put_u32(r, "length", static_cast<uint32_t>(window_.size()));
  if (options_.position_ids) layout_.put_position_ids(r, positions_);
  ++record_count;
  ++stats.records;
  stats.tokens += window_.size();
  window_.clear();
  positions_.clear();
  // A document continuing into the next window starts again at position 0 there.
  position_ = 0;
}

}  // namespace shardkit::shardify
