// Where a long text can be cut so that its two sides tokenize, one by one, into the ids of the
// whole: shardify tokenizes one large document on several threads by cutting it there.
//
// The cuts are after a newline that sits between two characters that are not White_Space:
// "word.\nNext". Every pre-tokenizer that allows cuts (the byte-level Split patterns matched by
// hand, BERT's) ends a pre-token at such a newline in the whole text, and the left side alone
// ends with the same pre-tokens: the piece before the newline stops at it (it is not of the
// piece's class, or it ends a `[\r\n]*` tail that the text after it cannot lengthen, since no
// newline follows), and the newline is a piece of its own or that tail, never the start of a
// longer whitespace run. Normalizers that allow cuts (the Unicode forms, Lowercase) work per
// character or per combining sequence, and a newline starts a sequence that nothing joins.
// Merges stay inside pre-tokens. Added tokens are matched before all this; tokenizer_base
// refuses cuts that one could cross. The general pipeline's rules (literal Replaces and Splits,
// merges that only make pieces, SentencePiece's normalizer) are in lib/tokenizer/README.md; what
// goes before a whole text only (a Prepend, a Metaspace's replacement, a dummy prefix) is left
// out of the parts after the first (Tokenizer::encode_ids_after_cut).
#pragma once

#include <array>
#include <cstddef>
#include <string_view>

namespace shardkit::tok {

// Whether a literal that a normalizer replaces or a pre-tokenizer splits on keeps to the sides
// of such a cut: one that starts with white space and holds no newline never matches at the
// visible character after the newline, nor across the newline.
inline bool literal_keeps_newline_cuts(std::string_view literal) {
  return !literal.empty() &&
         std::string_view(" \t\r\v\f").find(literal[0]) != std::string_view::npos &&
         literal.find('\n') == std::string_view::npos;
}

// The first p >= from with text[p - 1] == '\n' between two visible characters (neither
// White_Space nor a control or format character, so each makes a token: no part of a cut text
// is empty), whose first byte text[p] is not marked in `refused_first_bytes`; npos when there
// is none.
size_t next_newline_cut(std::string_view text, size_t from,
                        const std::array<bool, 256>& refused_first_bytes);

}  // namespace shardkit::tok
