// The converter's read stage: examples in input order, cut into batches for the tokenizing
// workers. A long document (packed lm) is cut into parts at positions the tokenizer names
// (Tokenizer::next_cut), each part a batch of its own, so that several threads tokenize it
// while the ids stay those of the whole document. JSONL lines come unparsed
// (ReaderOptions::defer_json): the workers read them with read_unread_json().
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <future>
#include <memory>
#include <vector>

#include "shardify/convert_inputs.h"
#include "shardify/encoded_batch.h"
#include "tokenizer/tokenizer.h"

namespace shardkit::shardify {

// Batches are sized so that a worker has a few milliseconds of tokenization per job; a long
// document's parts are about one batch of text each.
inline constexpr size_t kBatchExamples = 512;
inline constexpr size_t kBatchTextBytes = 256 * 1024;
// Documents longer than this are cut into parts (when a cutter is given).
inline constexpr size_t kPartsAbove = 2 * kBatchTextBytes;

class ExampleBatcher {
 public:
  // `cutter`: the tokenizer that names where long documents may be cut; null: never cut.
  explicit ExampleBatcher(const ConvertInputs& in, const tok::Tokenizer* cutter = nullptr)
      : in_(in), reader_options_(in.reader), file_(in.first_file), cutter_(cutter) {
    reader_options_.defer_json = true;
  }

  // The next batch (possibly empty when it only ends a file); false after the last file.
  bool next(std::vector<Example>& examples, EncodedBatch& batch);
  // Input bytes done, for progress (the file's size is its total).
  uint64_t bytes_done() const;
  // Decompressed bytes of the files read to the end.
  uint64_t text_bytes() const { return text_bytes_; }

 private:
  // Moves a long document's parts into parts_; false (ex untouched) when it stays whole.
  bool cut_into_parts(Example& ex);
  // File i's reader: the one opened ahead for it, else opened now.
  std::unique_ptr<ExampleReader> open_file(size_t i);
  // Opens file i on a thread of its own while the one before is read, when it is a compressed
  // file worth decoding ahead: a file checked before use (a conversion under --on-error skip
  // that met a damaged file) is decoded whole first, which the read stage, the one serial
  // stage, otherwise waited for.
  void open_ahead(size_t i);

  const ConvertInputs& in_;
  ReaderOptions reader_options_;
  size_t file_;
  const tok::Tokenizer* cutter_;
  std::unique_ptr<ExampleReader> reader_;
  std::future<std::unique_ptr<ExampleReader>> next_reader_;  // file next_file_'s, opening
  size_t next_file_ = 0;
  std::deque<Example> parts_;     // of the document being handed out, one per batch
  uint64_t parts_text_left_ = 0;  // their text bytes
  uint64_t bytes_before_file_ = 0;
  uint64_t text_bytes_ = 0;
};

}  // namespace shardkit::shardify
