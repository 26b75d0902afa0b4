#include "tokenizer/normalizers.h"

#include <algorithm>
#include <bit>
#include <cstring>

#include "tokenizer/ascii_masks.h"
#include "tokenizer/byte_level.h"
#include "tokenizer/escape_spaces.h"
#include "tokenizer/precompiled_charsmap.h"
#include "tokenizer/sentencepiece_normalizer.h"
#include "tokenizer/text_cuts.h"
#include "tokenizer/unicode.h"

namespace shardkit::tok {

namespace {

// Only the regions that can change are rewritten: a long document with a few characters to
// change costs a copy, where its changes as a whole took about 40 bytes a byte.
void apply_unicode_form(NormalizedString& s, UnicodeForm form) {
  const std::string& t = s.text();
  s.transform_ranges([&](size_t from, size_t& begin, size_t& end, std::vector<CharChange>& dest) {
    if (!next_unstable_region(t, from, form, begin, end)) return false;
    unicode_form_changes(std::string_view(t).substr(begin, end - begin), form, dest);
    return true;
  });
}

// Lowercasing is per character: the regions are the runs of characters that it changes.
void lowercase(NormalizedString& s) {
  const std::string& t = s.text();
  char32_t lower[2];
  int n = 0;
  // Decodes the character at `i` (moving past it) into `lower`; true when that changes it.
  auto changes = [&](size_t& i) {
    const auto c = static_cast<unsigned char>(t[i]);
    if (c < 0x80) {
      ++i;
      lower[0] = c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c;
      n = 1;
      return lower[0] != c;
    }
    const char32_t cp = decode_utf8(t, i);
    n = to_lower_full(cp, lower);
    return n != 1 || lower[0] != cp;
  };
  s.transform_ranges([&](size_t from, size_t& begin, size_t& end, std::vector<CharChange>& dest) {
    for (begin = from; begin < t.size();) {
      const size_t at = begin;
      if (changes(begin)) {
        begin = at;
        break;
      }
    }
    if (begin >= t.size()) return false;
    dest.clear();
    for (end = begin; end < t.size();) {
      const size_t at = end;
      if (!changes(end)) {
        end = at;
        break;
      }
      for (int k = 0; k < n; ++k) dest.push_back({lower[k], k == 0 ? 0 : 1});
    }
    return true;
  });
}

// HF's lrstrip: White_Space characters at either end.
void strip(NormalizedString& s, bool left, bool right) {
  const std::string& t = s.text();
  std::vector<char32_t> chars;
  for (size_t i = 0; i < t.size();) chars.push_back(decode_utf8(t, i));
  size_t lead = 0, trail = 0;
  if (left)
    while (lead < chars.size() && is_white_space(chars[lead])) ++lead;
  if (right)
    while (trail < chars.size() - lead && is_white_space(chars[chars.size() - 1 - trail])) ++trail;
  if (lead == 0 && trail == 0) return;
  std::vector<CharChange> changes;
  for (size_t i = lead; i + trail < chars.size(); ++i)
    changes.push_back({chars[i], i + trail + 1 == chars.size() ? -static_cast<int>(trail) : 0});
  s.transform(changes, lead);
}

bool is_mark(char32_t cp) {
  // The crate's is_combining_mark: general categories Mn, Mc, Me.
  return is_combining_mark(cp);
}

// HF's NormalizedString::filter keeping non-marks.
void strip_accents(NormalizedString& s) {
  const std::string& t = s.text();
  bool any = false;
  for (unsigned char c : t)
    if (c >= 0x80) any = true;
  if (!any) return;
  std::vector<CharChange> changes;
  int removed = 0;
  size_t removed_start = 0;
  bool has_last = false;
  char32_t last = 0;
  for (size_t i = 0; i < t.size();) {
    char32_t c = decode_utf8(t, i);
    if (!is_mark(c)) {
      if (has_last) {
        changes.push_back({last, -removed});
      } else {
        removed_start = static_cast<size_t>(removed);
      }
      last = c;
      has_last = true;
      removed = 0;
    } else {
      ++removed;
    }
  }
  if (has_last) changes.push_back({last, -removed});
  s.transform(changes, removed_start);
}

}  // namespace

void replace_matches(NormalizedString& s, const Normalizer& n) {
  std::vector<Span> matches;
  const std::string& t = s.text();
  if (n.regex) {
    size_t from = 0, mb, me;
    while (from <= t.size() && n.regex->search(t, from, t.size(), &mb, &me)) {
      if (me == mb) {  // empty matches replace nothing in HF's find_matches
        if (mb >= t.size()) break;
        from = mb + utf8_length(static_cast<unsigned char>(t[mb]));
        continue;
      }
      matches.emplace_back(static_cast<uint32_t>(mb), static_cast<uint32_t>(me));
      from = me;
    }
  } else {
    if (n.pattern.empty()) return;
    for (size_t at = t.find(n.pattern); at != std::string::npos;
         at = t.find(n.pattern, at + n.pattern.size()))
      matches.emplace_back(static_cast<uint32_t>(at), static_cast<uint32_t>(at + n.pattern.size()));
  }
  if (matches.empty()) return;
  s.replace_ranges(matches, n.content);
}

void prepend_normalized(NormalizedString& s, const std::string& prefix) {
  const std::string& t = s.text();
  if (t.empty() || prefix.empty()) return;
  size_t i = 0;
  char32_t first = decode_utf8(t, i);
  std::vector<CharChange> changes;
  size_t k = 0;
  for (size_t j = 0; j < prefix.size(); ++k) changes.push_back({decode_utf8(prefix, j), k ? 1 : 0});
  changes.push_back({first, 1});
  s.transform(0, i, changes, 0);
}

void replace_literal(NormalizedString& s, std::string_view pattern, std::string_view content) {
  Normalizer n;
  n.kind = Normalizer::kReplace;
  n.pattern = pattern;
  n.content = content;
  n.apply(s);
}

bool Normalizer::is_identity() const {
  if (kind != kSequence) return false;
  for (const Normalizer& c : children)
    if (!c.is_identity()) return false;
  return true;
}

bool Normalizer::is_plain() const {
  switch (kind) {
    case kSequence:
      return std::all_of(children.begin(), children.end(),
                         [](const Normalizer& c) { return c.is_plain(); });
    case kPrepend:
      return true;
    case kReplace:
      return !regex;
    default:
      return false;
  }
}

void replace_byte(std::string_view text, size_t first, char byte, std::string_view content,
                  std::string& out, std::string_view prefix) {
  const auto matches = static_cast<size_t>(
      std::count(text.begin() + static_cast<ptrdiff_t>(first), text.end(), byte));
  const size_t size = prefix.size() + text.size() + matches * content.size() - matches;
  // Room for whole 16-byte and 8-byte stores past the end: a store may write beyond what it
  // keeps, and the next one, or the final resize, takes that back. (replace_byte_blocks needs
  // at most 16 bytes beyond what it keeps.)
  out.resize(size + 16 + 8);
  if (!prefix.empty()) std::memcpy(out.data(), prefix.data(), prefix.size());  // data() may be null
  if (first) std::memcpy(out.data() + prefix.size(), text.data(), first);
  char* w = out.data() + prefix.size() + first;
  const char* s = text.data();
  size_t i = first;
  size_t spread;
  i += replace_byte_blocks(s + i, text.size() - i, byte, content, w, &spread);
  w += spread;
  char padded[8] = {};
  const bool short_content = content.size() <= sizeof padded;
  if (short_content) std::memcpy(padded, content.data(), content.size());
  // 16 bytes at a time up to each match: no branch per byte (a space every word mispredicted).
  for (; short_content && i + 16 <= text.size();) {
    std::memcpy(w, s + i, 16);
    const uint32_t m = byte_mask16(s + i, byte);
    if (m == 0) {
      w += 16;
      i += 16;
      continue;
    }
    const auto k = static_cast<size_t>(std::countr_zero(m));
    std::memcpy(w + k, padded, sizeof padded);
    w += k + content.size();
    i += k + 1;
  }
  for (; i < text.size(); ++i) {
    if (s[i] != byte) {
      *w++ = s[i];
      continue;
    }
    for (char c : content) *w++ = c;
  }
  out.resize(size);
}

// The same edits as prepend_normalized and replace_matches make, without alignments: Prepend on
// a non-empty text, then every non-overlapping occurrence of the pattern, left to right.
void Normalizer::apply_plain(std::string& text) const {
  switch (kind) {
    case kSequence:
      for (const Normalizer& c : children) c.apply_plain(text);
      return;
    case kPrepend:
      if (!text.empty()) text.insert(0, content);
      return;
    case kReplace: {
      if (pattern.empty()) return;
      size_t at = text.find(pattern);
      if (at == std::string::npos) return;
      thread_local std::string out;
      out.clear();
      if (pattern.size() == 1) {  // a space by "▁" (Llama, Mistral): one pass, no call a match
        replace_byte(text, at, pattern[0], content, out);
        text.swap(out);
        return;
      }
      size_t from = 0;
      for (; at != std::string::npos; at = text.find(pattern, from)) {
        out.append(text, from, at - from);
        out += content;
        from = at + pattern.size();
      }
      out.append(text, from);
      text.swap(out);
      return;
    }
    default:
      return;
  }
}

bool Normalizer::leaves_unchanged(std::string_view text) const {
  switch (kind) {
    case kSequence:  // each step sees the same text, since the ones before left it alone
      return std::all_of(children.begin(), children.end(),
                         [&](const Normalizer& c) { return c.leaves_unchanged(text); });
    case kUnicode: {
      size_t begin = 0, end = 0;
      return !next_unstable_region(text, 0, form, begin, end);
    }
    default:
      return false;
  }
}

bool Normalizer::keeps_newline_cuts() const {
  switch (kind) {
    case kSequence:
      for (const Normalizer& c : children)
        if (!c.keeps_newline_cuts()) return false;
      return true;
    case kUnicode:
    case kLowercase:
      return true;
    case kReplace:
      return !regex && literal_keeps_newline_cuts(pattern);
    case kSentencePiece: {
      // A dummy prefix before a kept newline's part is a Prepend (without_prepend); the one
      // before a newline's space is the whole's.
      using Cuts = SentencePieceNormalizerSpec::NewlineCuts;
      const Cuts cuts = sentencepiece->newline_cuts;
      return cuts == Cuts::kNewlineAsWordStart ||
             (cuts == Cuts::kNewlineKept && !sentencepiece->add_dummy_prefix);
    }
    default:
      return false;
  }
}

bool Normalizer::cut_holds(std::string_view text, size_t p) const {
  if (kind == kSentencePiece) return sentencepiece->cut_holds(text, p);
  return std::all_of(children.begin(), children.end(),
                     [&](const Normalizer& c) { return c.cut_holds(text, p); });
}

bool Normalizer::newline_becomes_word_start() const {
  if (kind == kSentencePiece)
    return sentencepiece->newline_cuts ==
           SentencePieceNormalizerSpec::NewlineCuts::kNewlineAsWordStart;
  return std::any_of(children.begin(), children.end(),
                     [](const Normalizer& c) { return c.newline_becomes_word_start(); });
}

bool Normalizer::prepends() const {
  if (kind == kPrepend) return true;
  if (kind == kSentencePiece)
    return sentencepiece->add_dummy_prefix &&
           sentencepiece->newline_cuts == SentencePieceNormalizerSpec::NewlineCuts::kNewlineKept;
  return std::any_of(children.begin(), children.end(),
                     [](const Normalizer& c) { return c.prepends(); });
}

Normalizer Normalizer::without_prepend() const {
  if (kind == kPrepend) return Normalizer{};  // an empty Sequence: the identity
  Normalizer out = *this;
  if (kind == kSentencePiece) {
    auto spec = std::make_shared<SentencePieceNormalizerSpec>(*sentencepiece);
    spec->add_dummy_prefix = false;
    spec->prepare_newline_cuts();
    out.sentencepiece = std::move(spec);
  }
  for (Normalizer& c : out.children) c = c.without_prepend();
  return out;
}

void Normalizer::apply(NormalizedString& s) const {
  switch (kind) {
    case kSequence:
      for (const Normalizer& c : children) c.apply(s);
      return;
    case kUnicode:
      apply_unicode_form(s, form);
      return;
    case kLowercase:
      lowercase(s);
      return;
    case kStrip:
      strip(s, strip_left, strip_right);
      return;
    case kStripAccents:
      strip_accents(s);
      return;
    case kReplace:
      replace_matches(s, *this);
      return;
    case kPrepend:
      prepend_normalized(s, content);
      return;
    case kPrecompiled:
      charsmap->apply(s);
      return;
    case kSentencePiece: {
      NormalizedString out("", s.tracking());
      sentencepiece_normalize(*sentencepiece, s.text(), out);
      if (s.tracking() && !s.alignments().empty()) {
        // Compose: the input's own alignments map onto the original.
        std::vector<Span> composed;
        composed.reserve(out.alignments().size());
        for (Span a : out.alignments()) {
          Span o = a.first < a.second ? s.original_span(a.first, a.second)
                                      : s.original_span(a.first, a.first);
          composed.push_back(o);
        }
        std::string t = out.text();
        out.set(std::move(t), std::move(composed));
      }
      s = std::move(out);
      return;
    }
  }
}

}  // namespace shardkit::tok
