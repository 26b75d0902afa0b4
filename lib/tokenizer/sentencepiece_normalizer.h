// SentencePiece's own normalizer (for .model files): user-defined symbols kept as they are, the
// precompiled charsmap by longest match, remove_extra_whitespaces, add_dummy_prefix and
// whitespace escaped as U+2581, with each normalized byte aligned to the original bytes it came
// from.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "tokenizer/normalized_string.h"
#include "tokenizer/precompiled_charsmap.h"

namespace shardkit::tok {

struct SentencePieceNormalizerSpec {
  std::shared_ptr<const PrecompiledCharsmap> charsmap;  // may be null (identity)
  bool add_dummy_prefix = true;
  bool remove_extra_whitespaces = true;
  bool escape_whitespaces = true;
  std::vector<std::string> user_defined;  // matched first, longest, never normalized
};

void sentencepiece_normalize(const SentencePieceNormalizerSpec& spec, std::string_view input,
                             NormalizedString& out);

}  // namespace shardkit::tok
