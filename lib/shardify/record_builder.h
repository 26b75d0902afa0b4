// The four tasks as fixed-size records (HuggingFace field names; see README.md):
//   lm   input_ids[L], length u32                       (+ position_ids[L] u16 with --position-ids)
//   cls  input_ids[L], length u32, labels i32
//   pair input_ids[L], token_type_ids[L] u8, length u32, labels i32
//   qa   input_ids[L], token_type_ids[L] u8, length u32, start_positions i32, end_positions i32,
//        example_index u32, source_index u32
// input_ids are u16 when the vocabulary has fewer than 65,536 ids, else i32. Positions at and
// after `length` hold the pad id. TaskEncoder runs on worker threads; Packer (lm) runs in input
// order on one thread.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/schema.h"
#include "shardify/example.h"
#include "shardify/label_map.h"
#include "tokenizer/tokenizer.h"

namespace shardkit::shardify {

enum class Task { kLm, kCls, kPair, kQa };
Task parse_task(const std::string& name);
const char* task_name(Task task);

struct TaskOptions {
  Task task = Task::kLm;
  uint32_t max_len = 512;
  bool pack = true;             // lm
  bool position_ids = false;    // lm, packed
  uint32_t doc_stride = 128;    // qa: tokens shared by consecutive windows (HF's `stride`)
  uint32_t max_query_len = 64;  // qa: question tokens kept (BERT's max_query_length)
};

// Token-length buckets for statistics: bucket k counts lengths in [2^k, 2^(k+1)), bucket 0
// also counts length 0.
inline constexpr size_t kLengthBuckets = 25;
size_t length_bucket(uint64_t length);

struct ExampleError {
  uint32_t file_index = 0;
  uint64_t line = 0;
  std::string where;
  std::string reason;
};

// Counts that add up over batches, parts and merges.
struct ConvertStats {
  uint64_t examples = 0;  // documents, texts, pairs or questions read
  uint64_t records = 0;
  uint64_t tokens = 0;     // real (non-pad) tokens stored
  uint64_t truncated = 0;  // examples cut at --max-len (qa: contexts needing several windows)
  uint64_t skipped = 0;    // examples dropped by --on-error skip
  uint64_t qa_unanswerable_windows = 0;                     // qa windows labelled 0/0
  std::array<uint64_t, kLengthBuckets> length_histogram{};  // untruncated example lengths

  void add(const ConvertStats& o);
  std::string to_json() const;
  // Parses to_json() output; throws Error(kCorrupt) naming `where` when it does not fit.
  static ConvertStats from_json(const std::string& json, const std::string& where);
};

// What one worker makes of one batch of examples, applied later in input order.
struct BatchOutput {
  uint32_t file_index = 0;
  std::vector<unsigned char> records;  // complete records (all tasks but packed lm)
  size_t record_count = 0;
  std::vector<uint32_t> lm_ids;       // packed lm: documents' ids, each followed by the separator
  std::vector<uint32_t> lm_doc_ends;  // packed lm: end offset of each document in lm_ids
  std::vector<ExampleError> errors;   // in input order
  ConvertStats stats;
};

class RecordLayout {
 public:
  RecordLayout(const TaskOptions& options, size_t vocab_size);
  const Schema& schema() const { return schema_; }
  size_t record_size() const { return schema_.record_size(); }
  DType token_dtype() const { return token_dtype_; }

  // Fills input_ids (padding to max_len), and token_type_ids when the schema has them.
  void put_tokens(unsigned char* record, std::span<const uint32_t> ids,
                  std::span<const uint32_t> type_ids, uint32_t pad_id) const;
  void put_u32(unsigned char* record, const char* field, uint32_t value) const;
  void put_i32(unsigned char* record, const char* field, int32_t value) const;
  void put_position_ids(unsigned char* record, std::span<const uint16_t> positions) const;

 private:
  Schema schema_;
  DType token_dtype_;
  uint32_t max_len_;
  size_t ids_offset_ = 0;
  std::optional<size_t> type_ids_offset_;
};

class TaskEncoder {
 public:
  TaskEncoder(const tok::Tokenizer& tokenizer, const RecordLayout& layout,
              const TaskOptions& options, const LabelMap* labels);
  uint32_t pad_id() const { return pad_id_; }
  // The id that ends each document when packing (eos, else sep); nullopt when there is none.
  std::optional<uint32_t> separator_id() const { return separator_; }

  // Adds the example's records (or packed-lm ids) to `out`; content problems become errors.
  void encode(const Example& example, BatchOutput& out) const;

 private:
  void encode_lm(const Example& ex, BatchOutput& out) const;
  void encode_cls(const Example& ex, BatchOutput& out) const;
  // One text through the single-sequence template, truncated to max_len: the record's tokens and
  // length are written; returns the record, or nullptr after recording an error.
  unsigned char* encode_single(const Example& ex, BatchOutput& out, const char* empty_reason) const;
  void encode_pair(const Example& ex, BatchOutput& out) const;
  void encode_qa(const Example& ex, BatchOutput& out) const;
  unsigned char* new_record(BatchOutput& out) const;
  bool label_index(const Example& ex, BatchOutput& out, int32_t& index) const;

  const tok::Tokenizer& tok_;
  const RecordLayout& layout_;
  TaskOptions options_;
  const LabelMap* labels_;
  uint32_t pad_id_ = 0;
  std::optional<uint32_t> separator_;
};

// Packs documents' ids into windows of max_len tokens, in order. A window's last document
// continues in the next window; flush() pads the final partial window (called at the end of
// every input file, so that parts of a --part run merge into exactly a single run's records).
class Packer {
 public:
  Packer(const RecordLayout& layout, const TaskOptions& options, uint32_t pad_id);
  // Appends ids (documents ending at doc_ends); returns complete records ready to write.
  void add(const std::vector<uint32_t>& ids, const std::vector<uint32_t>& doc_ends,
           std::vector<unsigned char>& records, size_t& record_count, ConvertStats& stats);
  void flush(std::vector<unsigned char>& records, size_t& record_count, ConvertStats& stats);

 private:
  void emit(std::vector<unsigned char>& records, size_t& record_count, ConvertStats& stats);
  const RecordLayout& layout_;
  TaskOptions options_;
  uint32_t pad_id_;
  std::vector<uint32_t> window_;
  std::vector<uint16_t> positions_;
  uint32_t position_ = 0;  // position of the next token inside its document
};

}  // namespace shardkit::shardify
