// --task sft: one conversation (or prompt and response) to token ids and a loss mask, then the
// truncation policy. format/SPEC.md "SFT records" defines what the mask covers.
#include <algorithm>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "shardify/task_encoder.h"

namespace shardkit::shardify {
namespace {

void add_error(const Example& ex, EncodedBatch& out, std::string reason) {
  out.errors.push_back(error_of(ex, std::move(reason)));
}

// A prompt and response as the two messages a chat template renders.
std::string as_messages(const Example& ex) {
  nlohmann::ordered_json messages = nlohmann::ordered_json::array();
  messages.push_back({{"role", "user"}, {"content", ex.text}});
  messages.push_back({{"role", "assistant"}, {"content", ex.text_pair}});
  return messages.dump();
}

}  // namespace

std::optional<std::string> TaskEncoder::sft_messages(const Example& ex) const {
  try {
    return options_.messages ? ex.messages : as_messages(ex);
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
}

bool TaskEncoder::sft_tokens(const Example& ex, EncodedBatch& out, const RenderedChat* rendered,
                             std::vector<uint32_t>& ids, std::vector<uint8_t>& mask) const {
  if (!renderer_) {
    // The prompt as the tokenizer encodes one text (its template: <|begin_of_text|> for Llama 3),
    // then the response without special tokens, then end-of-text; the loss covers the last two.
    tok::Encoding prompt;
    tok_.encode_ids(ex.text, prompt.ids);
    ids = tok_.post_process(std::move(prompt), std::nullopt).ids;
    mask.assign(ids.size(), 0);
    tok_.encode_ids(ex.text_pair, ids);
    ids.push_back(*separator_);
    mask.resize(ids.size(), 1);
    return true;
  }
  if (!rendered) {
    add_error(ex, out, "the prompt or response is not valid UTF-8");
    return false;
  }
  const RenderedChat& chat = *rendered;
  if (!chat.error.empty()) {
    add_error(ex, out, chat.error);
    return false;
  }
  // As apply_chat_template: the rendered text is tokenized without adding special tokens (the
  // template writes them), added tokens such as <|im_end|> matched in the text.
  tok::Encoding e = tok_.encode(chat.text);
  ids = std::move(e.ids);
  if (options_.train_on == TrainOn::kAll) {
    mask.assign(ids.size(), 1);
    return true;
  }
  if (chat.spans.empty()) {
    add_error(ex, out, "no assistant message to train on");
    return false;
  }
  // A span covers the tokens from the one holding its first byte to the one holding its last
  // (HF's char_to_token on both ends).
  mask.assign(ids.size(), 0);
  for (const auto& [first, end] : chat.spans) {
    if (first == end) continue;
    size_t k = 0;
    while (k < ids.size() && e.offsets[k].second <= first) ++k;
    for (; k < ids.size() && e.offsets[k].first < end; ++k) mask[k] = 1;
  }
  return true;
}

void TaskEncoder::encode_sft(const Example& ex, EncodedBatch& out, const RenderedChat* chat) const {
  std::vector<uint32_t> ids;
  std::vector<uint8_t> mask;
  if (!sft_tokens(ex, out, chat, ids, mask)) return;
  const size_t n = ids.size();
  if (n == 0) {
    add_error(ex, out, "empty conversation (no tokens)");
    return;
  }
  ++out.stats.examples;
  ++out.stats.length_histogram[length_bucket(n)];
  const size_t max_len = options_.max_len;
  size_t cut = 0;
  if (n > max_len) {
    // Left truncation keeps the newest max_len tokens unless that would lose a trained token.
    const size_t first_trained =
        options_.train_on == TrainOn::kAll
            ? n - max_len
            : static_cast<size_t>(std::find(mask.begin(), mask.end(), 1) - mask.begin());
    if (options_.sft_truncation == Truncation::kDrop || n - first_trained > max_len) {
      ++out.stats.dropped;
      return;
    }
    cut = n - max_len;
    ++out.stats.truncated;
  }
  EncodedRow row;
  row.first = static_cast<uint32_t>(out.ids.size());
  row.count = static_cast<uint32_t>(n - cut);
  out.ids.insert(out.ids.end(), ids.begin() + cut, ids.end());
  if (options_.loss_mask())
    out.loss_mask.insert(out.loss_mask.end(), mask.begin() + cut, mask.end());
  out.stats.loss_tokens += static_cast<uint64_t>(std::count(mask.begin() + cut, mask.end(), 1));
  out.rows.push_back(row);
}

}  // namespace shardkit::shardify
