// A word memo for a lattice whose scores are float sums along a whole line (SentencePiece's
// Unigram). Where every path passes through a word's ends, the word's best path is a function of
// the word alone in exact arithmetic, but float sums round differently from each start score, so
// a near-tie may break the other way further along the line. The memo keeps, with each word's
// path found from a start score of 0, how far from 0 the start score may be for every decision of
// that search to come out the same, and is used only within that bound.
//
// The bound. Along a path of k pieces, the sums from a start score a stray from a + (the exact
// sum) by at most k roundings of 2^-24 of their magnitude, at most k * 2^-24 * (|a| + M) in all,
// where M bounds the magnitude of the path's own sums. Two candidates' difference therefore
// moves by at most 2n * 2^-24 * (|a| + M) for a word of n bytes (no path has more pieces than
// bytes), and by 2n * 2^-24 * M in the search from 0 itself. Every decision keeps its sign, for
// every start score a, while the smallest gap g that search saw exceeds 2n * 2^-24 * (|a| + 2M).
// The bound used is twice as strict (4(n + 1) instead of 2n) so that the second-order terms and
// the double sums rounded to float stay inside it.
#pragma once

#include <algorithm>
#include <bit>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <span>

namespace shardkit::tok {

// How close one search's decisions came: the smallest gap between a candidate and the score it
// was compared with, and the largest candidate magnitude.
struct Closeness {
  double min_gap = DBL_MAX;
  double max_magnitude = 0;

  void compared(double candidate, double incumbent) {
    min_gap = std::min(min_gap, std::fabs(candidate - incumbent));
    seen(candidate);
  }
  void seen(double candidate) { max_magnitude = std::max(max_magnitude, std::fabs(candidate)); }
};

// The largest |start score| below which a search over `bytes` bytes that saw `closeness` from a
// start score of 0 makes every decision the same; 0 when a tie leaves no room.
inline float reuse_bound(const Closeness& closeness, size_t bytes) {
  if (closeness.min_gap == DBL_MAX) return FLT_MAX;  // no decision: one path only
  const double slack = 4.0 * static_cast<double>(bytes + 1) * 0x1p-24;
  const double bound = closeness.min_gap / slack - 2 * closeness.max_magnitude;
  return static_cast<float>(std::clamp(bound, 0.0, static_cast<double>(FLT_MAX)));
}

// A memo entry is the reuse bound's bits, then the path's ids in order (each piece's bytes follow
// from its id, an unknown character's from the text).
inline uint32_t bound_cell(float reuse_below) { return std::bit_cast<uint32_t>(reuse_below); }
inline float reuse_below(std::span<const uint32_t> entry) { return std::bit_cast<float>(entry[0]); }

}  // namespace shardkit::tok
