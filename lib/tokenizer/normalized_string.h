// A text under normalization with, per normalized byte, the span of the original bytes it came
// from: HF tokenizers' NormalizedString, so that every normalizer keeps offsets exact.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace shardkit::tok {

using Span = std::pair<uint32_t, uint32_t>;

// One output character of a transformation and how it relates to the input (HF's `changes`):
// 0 replaces the next input character, 1 is inserted, -N replaces the next character and
// removes the N after it.
struct CharChange {
  char32_t c;
  int change;
};

class NormalizedString {
 public:
  NormalizedString() = default;
  // `track` keeps the per-byte original spans (for offsets); without it only the text changes.
  NormalizedString(std::string_view original, bool track);

  const std::string& text() const { return text_; }
  bool tracking() const { return track_; }
  // Original span of normalized bytes [begin, end) (HF's convert_offsets of a normalized range).
  Span original_span(size_t begin, size_t end) const;
  const std::vector<Span>& alignments() const { return align_; }

  // HF's transform_range over normalized bytes [begin, end): `dest` replaces that range;
  // `initial_offset` input characters at its start are removed first.
  void transform(size_t begin, size_t end, const std::vector<CharChange>& dest,
                 size_t initial_offset);
  void transform(const std::vector<CharChange>& dest, size_t initial_offset) {
    transform(0, text_.size(), dest, initial_offset);
  }
  // transform() of ascending, disjoint ranges in one pass: `next(from, begin, end, dest)` gives
  // the first range at or after byte `from` and its changes, or false when none is left. The
  // bytes between ranges are copied once (nothing when there is no range), where a transform()
  // per range would move the rest of the text each time.
  void transform_ranges(const std::function<bool(size_t from, size_t& begin, size_t& end,
                                                 std::vector<CharChange>& dest)>& next);
  // Replaces each of the ascending, disjoint, non-empty byte ranges with `content`, its
  // characters inserted after the removed ones (HF's replace of each match), in one pass.
  void replace_ranges(const std::vector<Span>& ranges, std::string_view content);

  // A copy of normalized bytes [begin, end) keeping their alignments.
  NormalizedString slice(size_t begin, size_t end) const;
  void set(std::string text, std::vector<Span> align) {
    text_ = std::move(text);
    align_ = std::move(align);
  }

 private:
  // Rebuilds the text in one pass, unless `next(from, begin, end)` finds no range: for each range
  // (ascending, disjoint), the bytes before it are copied with their alignments, then `replace`
  // appends the range's new bytes.
  void rebuild(size_t reserve,
               const std::function<bool(size_t from, size_t& begin, size_t& end)>& next,
               const std::function<void(size_t begin, size_t end, std::string& out,
                                        std::vector<Span>& out_align)>& replace);
  // Appends what `dest` makes of bytes [begin, end) to `out` and its alignments to `out_align`.
  void append_changed(size_t begin, size_t end, const std::vector<CharChange>& dest,
                      size_t initial_offset, std::string& out, std::vector<Span>& out_align) const;

  std::string text_;
  std::vector<Span> align_;
  bool track_ = false;
};

}  // namespace shardkit::tok
