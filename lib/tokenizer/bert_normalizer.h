// HF's BertNormalizer: clean text (controls removed, white space made ' '), spaces around CJK
// ideographs, NFD accent stripping, lowercase. The fused WordPiece tokenizer applies it a
// character at a time as it walks the input; bert_normalize builds the normalized text with its
// alignments, for matching normalized added tokens in it.
#pragma once

#include "tokenizer/normalized_string.h"

namespace shardkit::tok {

struct BertNormalizerOptions {
  bool clean_text = true;
  bool handle_chinese_chars = true;
  bool strip_accents = true;
  bool lowercase = true;
  bool any() const { return clean_text || handle_chinese_chars || strip_accents || lowercase; }
};

// BertNormalizer's strip_accents and lowercase on one code point: canonical decomposition and
// removal of nonspacing marks, then full lowercasing. At most 8 decomposed characters, each
// lowercasing to at most 2. Shared by the fused path and bert_normalize so they agree.
constexpr int kMaxBertNormalizedChars = 16;
int bert_normalize_char(char32_t cp, const BertNormalizerOptions& n, char32_t* out);

// BertNormalizer over `s` with HF's alignments: each output character keeps the span of the
// character it came from, the spaces around a CJK ideograph the ideograph's.
void bert_normalize(NormalizedString& s, const BertNormalizerOptions& n);

}  // namespace shardkit::tok
