// One byte written as several, 16 bytes at a time by a byte shuffle: SentencePiece's
// normalization of the commonest text (printable ASCII, single spaces, each space as U+2581),
// and a Replace of one byte (Llama's space by U+2581). The paths before went a word at a time:
// SentencePiece's copy mispredicted branches that end every word and every space (a fifth of a
// BPE .model's time on English), and the Replace's search for the next space waited on the one
// before (a sixth of Llama-2's).
#pragma once

#include <cstddef>
#include <string_view>

namespace shardkit::tok {

// Bytes an output buffer needs past what escape_spaced_ascii writes: its stores are 16 bytes
// wide.
constexpr size_t kEscapeSlack = 16;

// Copies p[0, k) to `out` with each space as U+2581 (E2 96 81), for the largest k <= most, a
// multiple of 16, such that every byte of p[0, k] (the one after too, so that k < n) is in
// ' '..'~' and no two spaces are adjacent. Returns k and sets *written; `out` must hold
// 2 * most + kEscapeSlack bytes. Returns 0 where the CPU lacks the instructions (SSSE3): the
// caller's general path is the portable one.
size_t escape_spaced_ascii(const unsigned char* p, size_t n, size_t most, char* out,
                           size_t* written);

// Copies p[0, k) to `out` with each `byte` as `content` (1 to 4 bytes), for k the largest
// multiple of 16 <= n. Returns k and sets *written; `out` must hold 4 * n + kEscapeSlack bytes.
// Returns 0 without SSSE3, or for a longer or empty content.
size_t replace_byte_blocks(const char* p, size_t n, char byte, std::string_view content, char* out,
                           size_t* written);

// escape_spaced_ascii, a byte at a time (for tests).
size_t escape_spaced_ascii_reference(const unsigned char* p, size_t n, size_t most, char* out,
                                     size_t* written);

}  // namespace shardkit::tok
