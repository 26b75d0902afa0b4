// NFD/NFKD/NFC/NFKC as HF tokenizers computes them (the unicode-normalization-alignments
// crate): the output characters with their alignment changes, so offsets stay exact. Character
// data (decompositions, combining classes, compositions) comes from utf8proc.
#pragma once

#include <string_view>
#include <vector>

#include "tokenizer/normalized_string.h"

namespace shardkit::tok {

enum class UnicodeForm { kNFD, kNFKD, kNFC, kNFKC };

// True when `text` is unchanged by `form` (every character lacks a decomposition, is a starter
// and never composes): the common case, checked without building changes.
bool is_stable(std::string_view text, UnicodeForm form);
// The (char, change) stream the crate yields for `text`.
void unicode_form_changes(std::string_view text, UnicodeForm form, std::vector<CharChange>& out);

}  // namespace shardkit::tok
