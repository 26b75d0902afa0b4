#include "tokenizer/tokenizer_base.h"

#include <algorithm>

#include "core/checksum.h"
#include "core/error.h"
#include "tokenizer/text_cuts.h"
#include "tokenizer/unicode.h"

namespace shardkit::tok {

namespace {

void append_token(Encoding& e, uint32_t id, uint32_t type_id, std::pair<uint32_t, uint32_t> off,
                  int8_t seq) {
  e.ids.push_back(id);
  e.type_ids.push_back(type_id);
  e.offsets.push_back(off);
  e.sequence_ids.push_back(seq);
}

}  // namespace

void TokenizerBase::set_added_tokens(std::vector<AddedToken> tokens,
                                     const std::vector<std::string>& normalized_contents) {
  added_ = std::move(tokens);
  added_by_content_ = StringIdMap{};
  added_by_id_.clear();
  added_strings_.clear();
  std::vector<AddedToken> plain, normalized;
  size_t k = 0;
  for (size_t i = 0; i < added_.size(); ++i) {
    const AddedToken& t = added_[i];
    added_by_content_.set(t.content, t.id);
    added_by_id_.emplace_back(t.id, i);
    if (t.normalized) {
      normalized.push_back(t);
      if (k < normalized_contents.size()) normalized.back().content = normalized_contents[k];
      ++k;
    } else {
      plain.push_back(t);
    }
    added_strings_.push_back(t.normalized ? normalized.back().content : t.content);
  }
  std::sort(added_by_id_.begin(), added_by_id_.end());
  added_token_crosses_newline_ = false;
  added_token_may_end_at_cut_ = false;
  lstrip_first_byte_.fill(false);
  for (const auto* list : {&plain, &normalized})
    for (const AddedToken& t : *list) {
      // A match reaches across a cut only with a character after a newline: runs of newlines
      // alone (Gemma's "\n" to "\n\n\n...") end at one, before a visible character.
      const size_t newline = t.content.find('\n');
      if (newline != std::string::npos &&
          t.content.find_first_not_of('\n', newline) != std::string::npos)
        added_token_crosses_newline_ = true;
      if (t.rstrip || t.content.ends_with('\n')) added_token_may_end_at_cut_ = true;
      if (t.lstrip && !t.content.empty())
        lstrip_first_byte_[static_cast<unsigned char>(t.content[0])] = true;
    }
  matcher_.build(std::move(plain));
  normalized_matcher_.build(std::move(normalized));
}

const AddedToken* TokenizerBase::added_token(uint32_t id) const {
  auto it = std::lower_bound(added_by_id_.begin(), added_by_id_.end(),
                             std::pair<uint32_t, size_t>{id, 0});
  if (it != added_by_id_.end() && it->first == id) return &added_[it->second];
  return nullptr;
}

// Non-normalized added tokens are found in the raw text; normalized ones in each remaining
// segment (here when the model has no normalizer of its own, else by encode_segment).
template <typename Sink>
void TokenizerBase::split_added(std::string_view text, Sink&& sink) const {
  const bool second = !normalized_matcher_.empty() && !matches_normalized_added();
  matcher_.split(text, [&](bool is_token, size_t b, size_t e, uint32_t id) {
    if (is_token || !second) {
      sink(is_token, b, e, id);
      return;
    }
    normalized_matcher_.split(
        text.substr(b, e - b),
        [&](bool t2, size_t b2, size_t e2, uint32_t id2) { sink(t2, b + b2, b + e2, id2); });
  });
}

Encoding TokenizerBase::encode(std::string_view text) const {
  validate_utf8(text);
  Encoding e;
  split_added(text, [&](bool is_token, size_t b, size_t end, uint32_t id) {
    if (is_token) {
      e.word_ids.push_back(e.word_ids.empty() ? 0 : e.word_ids.back() + 1);
      e.ids.push_back(id);
      e.offsets.emplace_back(static_cast<uint32_t>(b), static_cast<uint32_t>(end));
    } else {
      encode_segment(text, b, end, e.ids, &e);
    }
  });
  e.type_ids.assign(e.ids.size(), 0);
  e.sequence_ids.assign(e.ids.size(), 0);
  finish_encoding(e);
  return e;
}

void TokenizerBase::encode_ids(std::string_view text, std::vector<uint32_t>& out) const {
  validate_utf8(text);
  split_added(text, [&](bool is_token, size_t b, size_t end, uint32_t id) {
    if (is_token) {
      out.push_back(id);
    } else {
      encode_segment(text, b, end, out, nullptr);
    }
  });
}

// The part's first segment continues the one the cut split; a segment after an added token
// starts anew (next_cut makes sure no added token ends at the cut when that matters).
void TokenizerBase::encode_ids_after_cut(std::string_view part, std::vector<uint32_t>& out) const {
  validate_utf8(part);
  split_added(part, [&](bool is_token, size_t b, size_t end, uint32_t id) {
    if (is_token) {
      out.push_back(id);
    } else if (b == 0) {
      encode_segment_after_cut(part, end, out);
    } else {
      encode_segment(part, b, end, out, nullptr);
    }
  });
}

Encoding TokenizerBase::post_process(Encoding first, std::optional<Encoding> second) const {
  Encoding out;
  auto append_seq = [&](const Encoding& src, uint32_t type_id, int8_t seq) {
    for (size_t i = 0; i < src.size(); ++i) {
      append_token(out, src.ids[i], type_id,
                   src.offsets.size() > i ? src.offsets[i] : std::pair<uint32_t, uint32_t>{0, 0},
                   seq);
      out.word_ids.push_back(src.word_ids.size() > i ? src.word_ids[i] : Encoding::kNoWord);
    }
  };
  if (!post_.has_template) {
    append_seq(first, 0, 0);
    if (second) append_seq(*second, 1, 1);
    return out;
  }
  const auto& pieces = second ? post_.pair : post_.single;
  for (const TemplatePiece& p : pieces) {
    if (p.is_sequence) {
      if (p.sequence == 0) {
        append_seq(first, p.type_id, 0);
      } else if (second) {
        append_seq(*second, p.type_id, 1);
      }
    } else {
      for (uint32_t id : p.ids) {
        append_token(out, id, p.type_id, {0, 0}, -1);
        out.word_ids.push_back(Encoding::kNoWord);
      }
    }
  }
  return out;
}

size_t TokenizerBase::next_cut(std::string_view text, size_t from) const {
  if (!cuts_after_newlines() || added_token_crosses_newline_ ||
      (added_token_may_end_at_cut_ && prefixes_segments()))
    return std::string_view::npos;
  std::array<bool, 256> refused;
  for (size_t b = 0; b < refused.size(); ++b)
    refused[b] = lstrip_first_byte_[b] || model_refused_[b];
  size_t cut = next_newline_cut(text, from, refused);
  while (cut != std::string_view::npos && !cut_holds(text, cut))
    cut = next_newline_cut(text, cut + 1, refused);
  return cut;
}

size_t TokenizerBase::added_tokens(bool pair) const {
  if (!post_.has_template) return 0;
  size_t n = 0;
  for (const TemplatePiece& p : pair ? post_.pair : post_.single)
    if (!p.is_sequence) n += p.ids.size();
  return n;
}

std::string TokenizerBase::decode(std::span<const uint32_t> ids, bool skip_special_tokens) const {
  std::vector<std::string> tokens;
  tokens.reserve(ids.size());
  for (uint32_t id : ids) {
    auto it = std::lower_bound(added_by_id_.begin(), added_by_id_.end(),
                               std::pair<uint32_t, size_t>{id, 0});
    if (it != added_by_id_.end() && it->first == id) {
      const std::string& token = added_strings_[it->second];
      if (skip_special_tokens && names_special_token(token)) continue;
      tokens.push_back(token);
      continue;
    }
    if (auto t = model_id_to_token(id)) tokens.push_back(std::move(*t));
  }
  return decode_tokens(tokens);
}

size_t TokenizerBase::vocab_size() const {
  size_t n = model_vocab_size();
  for (const AddedToken& t : added_) n = std::max<size_t>(n, size_t{t.id} + 1);
  return n;
}

std::optional<uint32_t> TokenizerBase::token_to_id(std::string_view token) const {
  uint32_t id = added_by_content_.find(token);
  if (id != StringIdMap::kNone) return id;
  return model_token_to_id(token);
}

std::string TokenizerBase::id_to_token(uint32_t id) const {
  auto it = std::lower_bound(added_by_id_.begin(), added_by_id_.end(),
                             std::pair<uint32_t, size_t>{id, 0});
  if (it != added_by_id_.end() && it->first == id) return added_strings_[it->second];
  return model_id_to_token(id).value_or(std::string());
}

bool TokenizerBase::names_special_token(std::string_view token) const {
  const uint32_t id = added_by_content_.find(token);
  const AddedToken* t = id == StringIdMap::kNone ? nullptr : added_token(id);
  return t && t->special;
}

bool TokenizerBase::is_special(uint32_t id) const {
  auto it = std::lower_bound(added_by_id_.begin(), added_by_id_.end(),
                             std::pair<uint32_t, size_t>{id, 0});
  if (it != added_by_id_.end() && it->first == id && added_[it->second].special) return true;
  if (std::find(extra_special_.begin(), extra_special_.end(), id) != extra_special_.end())
    return true;
  if (post_.has_template) {
    for (const auto* list : {&post_.single, &post_.pair})
      for (const TemplatePiece& p : *list)
        if (!p.is_sequence && std::find(p.ids.begin(), p.ids.end(), id) != p.ids.end()) return true;
  }
  return false;
}

void TokenizerBase::resolve_special_tokens(std::optional<uint32_t> unk) {
  auto first_of = [&](std::initializer_list<const char*> names) -> std::optional<uint32_t> {
    for (const char* n : names)
      if (auto id = token_to_id(n)) return id;
    return std::nullopt;
  };
  specials_.cls = first_of({"[CLS]", "<cls>", "<s>"});
  specials_.sep = first_of({"[SEP]", "<sep>", "</s>"});
  specials_.pad = first_of({"[PAD]", "<pad>", "<|padding|>", "<|finetune_right_pad_id|>"});
  specials_.mask = first_of({"[MASK]", "<mask>"});
  specials_.unk = unk ? unk : first_of({"[UNK]", "<unk>"});
  specials_.bos = first_of({"<s>", "<|begin_of_text|>", "<|startoftext|>", "<|endoftext|>"});
  specials_.eos = first_of({"</s>", "<|end_of_text|>", "<|endoftext|>"});
}

TokenizerInfo TokenizerBase::describe() const {
  return {type_, vocab_size(), checksum_hex(fingerprint_), special_tokens()};
}

void truncate(Encoding& e, size_t max_tokens) {
  if (e.ids.size() <= max_tokens) return;
  e.ids.resize(max_tokens);
  if (e.type_ids.size() > max_tokens) e.type_ids.resize(max_tokens);
  if (e.offsets.size() > max_tokens) e.offsets.resize(max_tokens);
  if (e.sequence_ids.size() > max_tokens) e.sequence_ids.resize(max_tokens);
  if (e.word_ids.size() > max_tokens) e.word_ids.resize(max_tokens);
}

namespace {

// How many tokens HF's encode produced before truncating: it stops after the first word whose
// end reaches max_length.
size_t hf_encoded_length(const Encoding& e, size_t max_length) {
  if (e.size() <= max_length || e.word_ids.size() != e.size()) return e.size();
  size_t n = max_length;
  while (n < e.size() && e.word_ids[n] == e.word_ids[n - 1]) ++n;
  return n;
}

}  // namespace

void truncate_pair(Encoding& a, Encoding& b, size_t max_tokens, TruncationStrategy strategy,
                   size_t max_length) {
  if (strategy != TruncationStrategy::kLongestFirst || max_length == 0) {
    truncate_pair(a, b, max_tokens, strategy);
    return;
  }
  const size_t na = hf_encoded_length(a, max_length), nb = hf_encoded_length(b, max_length);
  // Decide with HF's lengths, then cut the real encodings to the same sizes.
  Encoding ca, cb;
  ca.ids.assign(na, 0);
  cb.ids.assign(nb, 0);
  truncate_pair(ca, cb, max_tokens, strategy);
  truncate(a, ca.size());
  truncate(b, cb.size());
}

// Mirrors HF tokenizers' truncate_encodings (utils/truncation.rs), direction right, stride 0.
void truncate_pair(Encoding& a, Encoding& b, size_t max_tokens, TruncationStrategy strategy) {
  if (max_tokens == 0) {
    truncate(a, 0);
    truncate(b, 0);
    return;
  }
  const size_t total = a.size() + b.size();
  if (total <= max_tokens) return;
  const size_t to_remove = total - max_tokens;
  if (strategy == TruncationStrategy::kLongestFirst) {
    size_t n1 = a.size(), n2 = b.size();
    bool swap = false;
    if (n1 > n2) {
      swap = true;
      std::swap(n1, n2);
    }
    if (n1 > max_tokens) {
      n2 = n1;
    } else {
      n2 = std::max(n1, max_tokens - n1);
    }
    if (n1 + n2 > max_tokens) {
      n1 = max_tokens / 2;
      n2 = n1 + max_tokens % 2;
    }
    if (swap) std::swap(n1, n2);
    truncate(a, n1);
    truncate(b, n2);
    return;
  }
  Encoding& target = strategy == TruncationStrategy::kOnlyFirst ? a : b;
  if (target.size() > to_remove) {
    truncate(target, target.size() - to_remove);
  } else {
    throw Error(ErrorCode::kInvalidArgument, "",
                std::string("truncation: the ") +
                    (strategy == TruncationStrategy::kOnlyFirst ? "first" : "second") +
                    " sequence has " + std::to_string(target.size()) +
                    " tokens, too short to remove " + std::to_string(to_remove) +
                    " and respect max_length " + std::to_string(max_tokens));
  }
}

}  // namespace shardkit::tok
