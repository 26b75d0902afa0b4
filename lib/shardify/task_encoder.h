// Turns examples into rows of token ids, on the worker threads: tokenization, the tokenizer's
// template ([CLS] a [SEP] b [SEP]), truncation, labels and QA windows. Content problems become
// errors in the batch, in input order, so that --on-error decides later.
#pragma once

#include <cstdint>
#include <optional>

#include "shardify/chat_renderer.h"
#include "shardify/encoded_batch.h"
#include "shardify/example.h"
#include "shardify/label_map.h"
#include "shardify/task.h"
#include "tokenizer/tokenizer.h"

namespace shardkit::shardify {

class TaskEncoder {
 public:
  // Throws Error(kInvalidArgument) when the options cannot work with this tokenizer. sft with
  // a chat template renders through `renderer`. `stop_at_first_error` (--on-error fail): a
  // batch ends at its first bad example, whose error ends the conversion, rather than waiting
  // for the renderer to go through the rest (each up to --render-timeout).
  TaskEncoder(const tok::Tokenizer& tokenizer, const TaskOptions& options, const LabelMap* labels,
              const ChatRenderer* renderer = nullptr, bool stop_at_first_error = false);
  // The id stored after `length`: the tokenizer's pad id, else 0.
  uint32_t padding_id() const { return padding_id_; }
  // The id that ends each document when packing (eos, else sep); nullopt when there is none.
  std::optional<uint32_t> separator_id() const { return separator_; }

  // Each example in order, into `out`; sft's chat template renders all their conversations in
  // one round trip. With stop_at_first_error, the examples after the first bad one are left out.
  void encode(const std::vector<Example>& examples, EncodedBatch& out) const;

 private:
  // `chat`: with a chat template, the example's rendered conversation (null: its messages were
  // not valid UTF-8).
  void encode(const Example& example, EncodedBatch& out, const RenderedChat* chat) const;
  void encode_document(const Example& ex, EncodedBatch& out) const;
  void encode_single(const Example& ex, EncodedBatch& out, const char* empty_reason,
                     int32_t label) const;
  void encode_pair(const Example& ex, EncodedBatch& out) const;
  void encode_qa(const Example& ex, EncodedBatch& out) const;
  // sft: ids and the loss mask of one conversation (sft_encoder.cc).
  void encode_sft(const Example& ex, EncodedBatch& out, const RenderedChat* chat) const;
  bool sft_tokens(const Example& ex, EncodedBatch& out, const RenderedChat* chat,
                  std::vector<uint32_t>& ids, std::vector<uint8_t>& mask) const;
  // What the chat template renders for `ex`: its messages, or its prompt and response as two;
  // nullopt when they are not valid UTF-8.
  std::optional<std::string> sft_messages(const Example& ex) const;
  bool label_index(const Example& ex, EncodedBatch& out, int32_t& index) const;

  const tok::Tokenizer& tok_;
  TaskOptions options_;
  const LabelMap* labels_;
  const ChatRenderer* renderer_;
  bool stop_at_first_error_;
  uint32_t padding_id_ = 0;
  std::optional<uint32_t> separator_;
};

}  // namespace shardkit::shardify
