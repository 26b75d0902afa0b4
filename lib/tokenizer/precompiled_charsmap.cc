#include "tokenizer/precompiled_charsmap.h"

#include <utf8proc.h>

#include <algorithm>
#include <cstring>

#include "core/error.h"
#include "tokenizer/ascii_masks.h"
#include "tokenizer/unicode.h"

namespace shardkit::tok {

namespace {

bool has_leaf(uint32_t u) { return (u >> 8) & 1; }
uint32_t value(uint32_t u) { return u & ((1u << 31) - 1); }
uint32_t label(uint32_t u) { return u & ((1u << 31) | 0xFF); }
uint32_t offset(uint32_t u) { return (u >> 10) << ((u & (1u << 9)) >> 6); }

}  // namespace

PrecompiledCharsmap::PrecompiledCharsmap(std::string_view blob, const std::string& source) {
  if (blob.empty()) return;
  if (blob.size() < 4) throw Error(ErrorCode::kInput, source, "precompiled_charsmap is truncated");
  uint32_t trie_size;
  std::memcpy(&trie_size, blob.data(), 4);
  if (trie_size % 4 != 0 || size_t{trie_size} + 4 > blob.size() || trie_size == 0)
    throw Error(ErrorCode::kInput, source,
                "precompiled_charsmap: trie size " + std::to_string(trie_size) +
                    " does not fit its " + std::to_string(blob.size()) + " bytes");
  units_.resize(trie_size / 4);
  std::memcpy(units_.data(), blob.data() + 4, trie_size);
  normalized_.assign(blob.substr(4 + trie_size));
  find_kept_ascii();
  find_plain_characters();
}

void PrecompiledCharsmap::find_kept_ascii() {
  std::string_view unused;
  for (unsigned b = 0; b < 128; ++b) {
    const char c = static_cast<char>(b);
    kept_ascii_[b] = !shortest_prefix(std::string_view(&c, 1), &unused);
  }
  kept_ascii_['\r'] = kept_ascii_['\r'] && !shortest_prefix("\r\n", &unused);
  keeps_printable_ascii_ = std::all_of(kept_ascii_.begin() + ' ', kept_ascii_.begin() + 0x7F,
                                       [](bool kept) { return kept; });
}

size_t PrecompiledCharsmap::kept_ascii_prefix(std::string_view t) const {
  const auto* p = reinterpret_cast<const unsigned char*>(t.data());
  size_t i = 0;
  while (keeps_printable_ascii_ && i + 16 <= t.size()) {
    const size_t run = printable_prefix16(p + i, ' ');
    i += run;
    if (run == 16) continue;
    if (!kept_ascii(p[i])) return i;
    ++i;  // a kept control byte
  }
  while (i < t.size() && kept_ascii(p[i])) ++i;
  return i;
}

std::string_view PrecompiledCharsmap::replacement_at(uint32_t index) const {
  if (index >= normalized_.size()) return {};
  size_t end = normalized_.find('\0', index);
  if (end == std::string::npos) end = normalized_.size();
  return std::string_view(normalized_).substr(index, end - index);
}

bool PrecompiledCharsmap::shortest_prefix(std::string_view key,
                                          std::string_view* replacement) const {
  if (units_.empty()) return false;
  size_t node = 0;
  uint32_t unit = units_[0];
  node ^= offset(unit);
  for (unsigned char c : key) {
    if (c == 0) break;
    node ^= c;
    if (node >= units_.size()) return false;
    unit = units_[node];
    if (label(unit) != c) return false;
    node ^= offset(unit);
    if (node >= units_.size()) return false;
    if (has_leaf(unit)) {
      *replacement = replacement_at(value(units_[node]));
      return true;
    }
  }
  return false;
}

size_t PrecompiledCharsmap::longest_prefix(std::string_view text, size_t pos,
                                           std::string_view* replacement) const {
  if (units_.empty()) return 0;
  size_t node = 0, best = 0;
  uint32_t unit = units_[0];
  node ^= offset(unit);
  for (size_t i = pos; i < text.size(); ++i) {
    auto c = static_cast<unsigned char>(text[i]);
    if (c == 0) break;
    node ^= c;
    if (node >= units_.size()) break;
    unit = units_[node];
    if (label(unit) != c) break;
    node ^= offset(unit);
    if (node >= units_.size()) break;
    if (has_leaf(unit)) {
      best = i + 1 - pos;
      *replacement = replacement_at(value(units_[node]));
    }
  }
  return best;
}

bool PrecompiledCharsmap::has_key_meeting(std::string_view bytes) const {
  if (units_.empty()) return false;
  size_t node = offset(units_[0]);
  for (const char ch : bytes) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == 0) return false;
    node ^= c;
    if (node >= units_.size() || label(units_[node]) != c) return false;
    const uint32_t unit = units_[node];
    node ^= offset(unit);
    if (node >= units_.size()) return false;
    if (has_leaf(unit)) return true;  // a key ends inside or at the end of `bytes`
  }
  return true;  // keys go on from `bytes`
}

bool PrecompiledCharsmap::has_longer_key(unsigned char b, unsigned char next_min,
                                         unsigned char next_max) const {
  if (units_.empty() || b == 0) return false;
  size_t node = offset(units_[0]) ^ b;
  if (node >= units_.size() || label(units_[node]) != b) return false;
  node ^= offset(units_[node]);
  for (unsigned c = std::max<unsigned>(next_min, 1); c <= next_max; ++c) {
    size_t child = node ^ c;
    if (child < units_.size() && label(units_[child]) == c) return true;
  }
  return false;
}

std::array<bool, 256> PrecompiledCharsmap::bytes_after_first() const {
  std::array<bool, 256> inside{};
  if (units_.empty()) return inside;
  // A node's child by byte c is the unit at base ^ c labelled c (base: the node's index ^ its
  // offset), so the units with index ^ label == base are that node's children. A walk from the
  // root over them meets every key's bytes, and no unit that no key reaches (which may hold any
  // label); probing all 255 bytes at every node instead took 40 ms for nmt_nfkc.
  std::vector<std::pair<uint32_t, uint32_t>> by_base;  // (base, child unit)
  for (size_t i = 1; i < units_.size(); ++i) {
    const uint32_t c = label(units_[i]);
    if (c != 0 && c <= 0xFF) by_base.emplace_back(static_cast<uint32_t>(i ^ c), i);
  }
  std::sort(by_base.begin(), by_base.end());
  std::vector<uint32_t> nodes{0};
  // A unit is taken once: each has one parent in a well-formed trie, and a malformed one (the
  // charsmap comes from the .model file) could otherwise lead the walk around a loop forever.
  std::vector<bool> reached(units_.size());
  while (!nodes.empty()) {
    const uint32_t node = nodes.back();
    nodes.pop_back();
    const uint32_t base = node ^ offset(units_[node]);
    auto it =
        std::lower_bound(by_base.begin(), by_base.end(), std::pair<uint32_t, uint32_t>{base, 0});
    for (; it != by_base.end() && it->first == base; ++it) {
      if (node != 0) inside[label(units_[it->second])] = true;
      if (!reached[it->second]) {
        reached[it->second] = true;
        nodes.push_back(it->second);
      }
    }
  }
  return inside;
}

namespace {

// HF's replace(): the new characters replace the old ones; extra ones are inserted, missing ones
// are removed after the last character written so far.
void replace_chars(std::vector<CharChange>& changes, std::string_view old_part,
                   std::string_view new_part) {
  long old_count = 0, new_count = 0;
  for (unsigned char c : old_part) old_count += (c & 0xC0) != 0x80;
  for (size_t i = 0; i < new_part.size();) {
    changes.push_back({decode_utf8(new_part, i), 0});
    ++new_count;
  }
  long diff = new_count - old_count;
  if (diff > 0) {
    for (long k = 0; k < diff; ++k) changes[changes.size() - 1 - static_cast<size_t>(k)].change = 1;
  } else if (diff < 0 && !changes.empty()) {
    changes.back().change += static_cast<int>(diff);
  }
}

bool test_bit(const std::vector<uint64_t>& bits, char32_t cp) {
  return cp < bits.size() * 64 && ((bits[cp / 64] >> (cp % 64)) & 1) != 0;
}

}  // namespace

// Whether a grapheme ends between `prev` and `cp` (utf8proc's stateful rule). Between two ASCII
// characters one always does, but inside CR LF (GB3-GB5, GB999); between two characters of the
// bound classes Other, LV and LVT (most letters, a Hangul syllable) one does too, since no rule
// but GB999 applies. utf8proc's state after such a character is its bound class, which a zero
// state recomputes from `prev`.
bool PrecompiledCharsmap::grapheme_break(char32_t prev, char32_t cp,
                                         utf8proc_int32_t& state) const {
  if (prev < 0x80 && cp < 0x80) {
    state = 0;
    return !(prev == '\r' && cp == '\n');
  }
  if (test_bit(breaks_around_, prev) && test_bit(breaks_around_, cp)) {
    state = 0;
    return true;
  }
  return utf8proc_grapheme_break_stateful(static_cast<utf8proc_int32_t>(prev),
                                          static_cast<utf8proc_int32_t>(cp), &state);
}

void PrecompiledCharsmap::find_plain_characters() {
  breaks_around_.assign(0x10000 / 64, 0);
  kept_.assign(0x10000 / 64, 0);
  std::string bytes;
  for (char32_t cp = 0; cp < 0x10000; ++cp) {
    if (cp >= 0xD800 && cp <= 0xDFFF) continue;
    const auto bound = utf8proc_get_property(static_cast<utf8proc_int32_t>(cp))->boundclass;
    if (bound == UTF8PROC_BOUNDCLASS_OTHER || bound == UTF8PROC_BOUNDCLASS_LV ||
        bound == UTF8PROC_BOUNDCLASS_LVT)
      breaks_around_[cp / 64] |= uint64_t{1} << (cp % 64);
    bytes.clear();
    append_utf8(bytes, cp);
    if (cp != 0 && !has_key_meeting(bytes)) kept_[cp / 64] |= uint64_t{1} << (cp % 64);
  }
}

void PrecompiledCharsmap::apply(NormalizedString& s) const {
  const std::string& t = s.text();
  // Most lines of English have no grapheme to look up, and in the rest the graphemes start at
  // the first byte that is not kept ASCII, or at the kept byte before it (which a combining mark
  // after it joins): each kept byte before those is a grapheme of its own that maps to itself.
  const size_t kept = kept_ascii_prefix(t);
  if (kept == t.size()) return;
  const size_t first = kept > 0 ? kept - 1 : 0;
  std::vector<CharChange> changes;
  changes.reserve(t.size() - first);
  bool modified = false;
  size_t g = first;
  utf8proc_int32_t state = 0;
  size_t i = first;
  char32_t prev = 0;
  bool have_prev = false;
  auto flush = [&](size_t gb, size_t ge) {
    if (ge - gb == 1 && kept_ascii(static_cast<unsigned char>(t[gb]))) {
      changes.push_back({static_cast<char32_t>(t[gb]), 0});
      return;
    }
    // A grapheme of one character that no key meets (most of Chinese and Korean) maps to itself;
    // the character is `prev`, the last one decoded.
    if (ge - gb == utf8_length(static_cast<unsigned char>(t[gb])) && test_bit(kept_, prev)) {
      changes.push_back({prev, 0});
      return;
    }
    std::string_view grapheme(t.data() + gb, ge - gb);
    std::string_view norm;
    if (grapheme.size() < 6 && shortest_prefix(grapheme, &norm)) {
      modified = true;
      replace_chars(changes, grapheme, norm);
      return;
    }
    for (size_t k = 0; k < grapheme.size();) {
      size_t start = k;
      char32_t c = decode_utf8(grapheme, k);
      std::string_view part = grapheme.substr(start, k - start);
      if (shortest_prefix(part, &norm)) {
        modified = true;
        replace_chars(changes, part, norm);
      } else {
        changes.push_back({c, 0});
      }
    }
  };
  while (i < t.size()) {
    size_t start = i;
    char32_t cp = decode_utf8(t, i);
    if (have_prev && grapheme_break(prev, cp, state)) {
      flush(g, start);
      g = start;
    }
    prev = cp;
    have_prev = true;
  }
  if (g < t.size()) flush(g, t.size());
  if (modified) s.transform(first, t.size(), changes, 0);
}

}  // namespace shardkit::tok
