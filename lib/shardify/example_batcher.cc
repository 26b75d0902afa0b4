#include "shardify/example_batcher.h"

#include <algorithm>
#include <string>

#include "shardify/read_ahead_source.h"

namespace shardkit::shardify {

std::unique_ptr<ExampleReader> ExampleBatcher::open_file(size_t i) {
  if (next_reader_.valid() && next_file_ == i) return next_reader_.get();
  return in_.open(i, reader_options_);
}

void ExampleBatcher::open_ahead(size_t i) {
  if (!reader_options_.decode_ahead || i >= in_.end_file || !worth_reading_ahead(in_.files[i].path))
    return;
  next_file_ = i;
  next_reader_ = std::async(std::launch::async, [this, i] { return in_.open(i, reader_options_); });
}

bool ExampleBatcher::cut_into_parts(Example& ex) {
  const std::string_view text = ex.body();
  if (!cutter_ || !ex.error.empty() || text.size() <= kPartsAbove) return false;
  std::vector<size_t> cuts;
  for (size_t at = kBatchTextBytes; at + kBatchTextBytes < text.size();) {
    const size_t cut = cutter_->next_cut(text, at);
    if (cut == std::string_view::npos || cut + kBatchTextBytes / 4 >= text.size()) break;
    cuts.push_back(cut);
    at = cut + kBatchTextBytes;
  }
  if (cuts.empty()) return false;
  cuts.push_back(text.size());
  // The parts share the document's memory: the file mapped, the buffer it was read into, or its
  // own text.
  std::shared_ptr<const void> owner = ex.text_owner;
  std::string_view whole = text;
  if (!ex.borrowed()) {
    auto own = std::make_shared<const std::string>(std::move(ex.text));
    whole = *own;
    owner = std::move(own);
  }
  size_t begin = 0;
  for (size_t cut : cuts) {
    Example part;
    part.file_index = ex.file_index;
    part.line = ex.line;
    part.text_owner = owner;
    part.text_view = whole.substr(begin, cut - begin);
    part.text_file = ex.text_file;
    part.continues = cut < whole.size();
    part.after_cut = begin > 0;
    parts_text_left_ += cut - begin;
    parts_.push_back(std::move(part));
    begin = cut;
  }
  return true;
}

uint64_t ExampleBatcher::bytes_done() const {
  if (!reader_) return bytes_before_file_;
  // A document cut into parts was read whole, but its parts not handed out yet are not done:
  // their share of the file's bytes read (compressed bytes for a compressed file) is left out.
  const uint64_t consumed = reader_->file_bytes_consumed();
  const uint64_t text = reader_->text_bytes_read();
  const uint64_t pending =
      text ? static_cast<uint64_t>(static_cast<double>(parts_text_left_) * consumed / text) : 0;
  return bytes_before_file_ + consumed - std::min(pending, consumed);
}

bool ExampleBatcher::next(std::vector<Example>& examples, EncodedBatch& batch) {
  examples.clear();
  for (;;) {
    if (!parts_.empty()) {
      batch.file_index = parts_.front().file_index;
      parts_text_left_ -= parts_.front().text_view.size();
      examples.push_back(std::move(parts_.front()));
      parts_.pop_front();
      return true;
    }
    if (!reader_) {
      if (file_ >= in_.end_file) return false;
      reader_ = open_file(file_);
      open_ahead(file_ + 1);
    }
    batch.file_index = static_cast<uint32_t>(file_);
    size_t text_bytes = 0;
    // Read in place: an Example is large, and moving each one in cost more than reading a
    // short line.
    examples.reserve(kBatchExamples);
    while (examples.size() < kBatchExamples && text_bytes < kBatchTextBytes) {
      Example& ex = examples.emplace_back();
      if (!reader_->next(ex)) {
        examples.pop_back();
        batch.ends_file = true;
        break;
      }
      // A long document goes in parts after the examples before it.
      if (cut_into_parts(ex)) {
        examples.pop_back();
        break;
      }
      text_bytes +=
          ex.body().size() + ex.text_pair.size() + ex.messages.size() + 64 * ex.questions.size();
    }
    if (batch.ends_file) {
      bytes_before_file_ += in_.files[file_].bytes;
      text_bytes_ += reader_->text_bytes_read();
      reader_.reset();
      ++file_;
    }
    if (!examples.empty() || batch.ends_file) return true;
  }
}

}  // namespace shardkit::shardify
