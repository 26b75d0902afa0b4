// NFD/NFKD/NFC/NFKC as HF tokenizers computes them (the unicode-normalization-alignments
// crate): the output characters with their alignment changes, so offsets stay exact. Character
// data (decompositions, combining classes, compositions) comes from utf8proc.
#pragma once

#include <string_view>
#include <vector>

#include "tokenizer/normalized_string.h"

namespace shardkit::tok {

enum class UnicodeForm { kNFD, kNFKD, kNFC, kNFKC };

// The next bytes [begin, end) at or after `from` that `form` may change, false when none: from
// the character before the first unstable one (a decomposition, a non-starter, a character that
// composes with the one before it) to the next stable character. `form` of the whole text is
// `form` of each such region with the text between them unchanged: nothing reorders or
// composes across a stable character, which is a starter that is no composition's second.
bool next_unstable_region(std::string_view text, size_t from, UnicodeForm form, size_t& begin,
                          size_t& end);
// The (char, change) stream the crate yields for `text`.
void unicode_form_changes(std::string_view text, UnicodeForm form, std::vector<CharChange>& out);

}  // namespace shardkit::tok
