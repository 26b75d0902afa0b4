// SentencePiece's normalization of the commonest text, 16 bytes at a time: printable ASCII that
// maps to itself, single spaces between, and each space written as U+2581. The general path
// copies such text a word at a time (sentencepiece_normalizer.cc); on English that cost a BPE
// .model a fifth of its time, in branches that end every word and every space.
#pragma once

#include <cstddef>

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

// The same, a byte at a time (for tests).
size_t escape_spaced_ascii_reference(const unsigned char* p, size_t n, size_t most, char* out,
                                     size_t* written);

}  // namespace shardkit::tok
