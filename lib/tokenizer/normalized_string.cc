#include "tokenizer/normalized_string.h"

#include <tuple>

#include "tokenizer/unicode.h"

namespace shardkit::tok {

NormalizedString::NormalizedString(std::string_view original, bool track)
    : text_(original), track_(track) {
  if (!track_) return;
  align_.resize(original.size());
  const auto* s = reinterpret_cast<const unsigned char*>(original.data());
  for (size_t i = 0; i < original.size();) {
    size_t n = utf8_length(s[i]);
    if (i + n > original.size()) n = original.size() - i;
    for (size_t k = 0; k < n; ++k)
      align_[i + k] = {static_cast<uint32_t>(i), static_cast<uint32_t>(i + n)};
    i += n;
  }
}

Span NormalizedString::original_span(size_t begin, size_t end) const {
  if (!track_ || align_.empty()) return {0, 0};
  if (begin >= end) {
    // HF expands an empty range to the position's alignment start.
    uint32_t p = begin < align_.size() ? align_[begin].first : align_.back().second;
    return {p, p};
  }
  return {align_[begin].first, align_[end - 1].second};
}

void NormalizedString::append_changed(size_t begin, size_t end, const std::vector<CharChange>& dest,
                                      size_t initial_offset, std::string& out,
                                      std::vector<Span>& out_align) const {
  const auto* s = reinterpret_cast<const unsigned char*>(text_.data());
  size_t p = begin;  // next input character to consume
  auto consume = [&]() -> size_t {
    if (p >= end) return 0;
    size_t n = utf8_length(s[p]);
    p += n;
    return n;
  };
  for (size_t k = 0; k < initial_offset; ++k) consume();
  for (const CharChange& d : dest) {
    const size_t idx = p;
    Span a{0, 0};
    if (track_) {
      if (d.change > 0) {
        if (idx >= 1) a = align_[idx - 1];
      } else {
        a = align_[idx];
      }
    }
    if (d.change <= 0) consume();
    for (int k = 0; k < -d.change; ++k) consume();
    size_t before = out.size();
    append_utf8(out, d.c);
    if (track_) out_align.insert(out_align.end(), out.size() - before, a);
  }
}

void NormalizedString::transform(size_t begin, size_t end, const std::vector<CharChange>& dest,
                                 size_t initial_offset) {
  std::string out;
  std::vector<Span> out_align;
  out.reserve(end - begin + 8);
  if (track_) out_align.reserve(end - begin + 8);
  append_changed(begin, end, dest, initial_offset, out, out_align);
  text_.replace(begin, end - begin, out);
  if (track_) {
    align_.erase(align_.begin() + static_cast<ptrdiff_t>(begin),
                 align_.begin() + static_cast<ptrdiff_t>(end));
    align_.insert(align_.begin() + static_cast<ptrdiff_t>(begin), out_align.begin(),
                  out_align.end());
  }
}

void NormalizedString::rebuild(
    size_t reserve, const std::function<bool(size_t from, size_t& begin, size_t& end)>& next,
    const std::function<void(size_t begin, size_t end, std::string& out,
                             std::vector<Span>& out_align)>& replace) {
  size_t begin = 0, end = 0;
  if (!next(0, begin, end)) return;
  std::string out;
  std::vector<Span> out_align;
  out.reserve(reserve);
  if (track_) out_align.reserve(reserve);
  size_t copied = 0;  // bytes of text_ before this are in out
  auto copy_to = [&](size_t to) {
    out.append(text_, copied, to - copied);
    if (track_)
      out_align.insert(out_align.end(), align_.begin() + static_cast<ptrdiff_t>(copied),
                       align_.begin() + static_cast<ptrdiff_t>(to));
  };
  do {
    copy_to(begin);
    replace(begin, end, out, out_align);
    copied = end;
  } while (next(copied, begin, end));
  copy_to(text_.size());
  text_ = std::move(out);
  align_ = std::move(out_align);
}

void NormalizedString::transform_ranges(
    const std::function<bool(size_t from, size_t& begin, size_t& end,
                             std::vector<CharChange>& dest)>& next) {
  thread_local std::vector<CharChange> dest;
  rebuild(
      text_.size() + text_.size() / 16 + 8,
      [&](size_t from, size_t& begin, size_t& end) { return next(from, begin, end, dest); },
      [&](size_t begin, size_t end, std::string& out, std::vector<Span>& out_align) {
        append_changed(begin, end, dest, 0, out, out_align);
      });
}

void NormalizedString::replace_ranges(const std::vector<Span>& ranges, std::string_view content) {
  size_t k = 0;
  rebuild(
      text_.size() + ranges.size() * content.size(),
      [&](size_t, size_t& begin, size_t& end) {
        if (k == ranges.size()) return false;
        std::tie(begin, end) = ranges[k++];
        return true;
      },
      [&](size_t, size_t end, std::string& out, std::vector<Span>& out_align) {
        out += content;
        // The matched characters are removed; the content's share the last removed byte's span.
        if (track_) out_align.insert(out_align.end(), content.size(), align_[end - 1]);
      });
}

NormalizedString NormalizedString::slice(size_t begin, size_t end) const {
  NormalizedString r;
  r.track_ = track_;
  r.text_ = text_.substr(begin, end - begin);
  if (track_)
    r.align_.assign(align_.begin() + static_cast<ptrdiff_t>(begin),
                    align_.begin() + static_cast<ptrdiff_t>(end));
  return r;
}

}  // namespace shardkit::tok
