#include "tokenizer/unicode_forms.h"

#include <utf8proc.h>

#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <string>
#include <unordered_map>

#include "tokenizer/ascii_masks.h"
#include "tokenizer/unicode.h"

namespace shardkit::tok {

namespace {

constexpr char32_t kHangulSBase = 0xAC00, kHangulLBase = 0x1100, kHangulVBase = 0x1161,
                   kHangulTBase = 0x11A7;
constexpr int kHangulLCount = 19, kHangulVCount = 21, kHangulTCount = 28,
              kHangulNCount = kHangulVCount * kHangulTCount,
              kHangulSCount = kHangulLCount * kHangulNCount;

uint8_t combining_class(char32_t cp) {
  return static_cast<uint8_t>(
      utf8proc_get_property(static_cast<utf8proc_int32_t>(cp))->combining_class);
}

// Whether the character alone maps to itself under utf8proc's `options` (a composed form).
bool composes_to_itself(char32_t cp, utf8proc_option_t options) {
  std::string s;
  append_utf8(s, cp);
  utf8proc_uint8_t* out = nullptr;
  const utf8proc_ssize_t n = utf8proc_map(
      reinterpret_cast<const utf8proc_uint8_t*>(s.data()), static_cast<utf8proc_ssize_t>(s.size()),
      &out, static_cast<utf8proc_option_t>(options | UTF8PROC_STABLE));
  const bool same = n >= 0 && s == std::string_view(reinterpret_cast<const char*>(out), n);
  std::free(out);
  return same;
}

// Everything the forms need that utf8proc does not expose directly, built once.
#include "unicode_forms_age.inc"

struct Tables {
  std::unordered_map<uint64_t, char32_t> compose;  // (first << 21 | second) -> composite
  std::vector<uint8_t> flags;                      // per code point, kUnstable* bits
  // kNfcChanges and kNfkcChanges: the composed form of the character alone is not the
  // character (a singleton, an excluded composition, a compatibility mapping). A precomposed
  // character that composes back (a Hangul syllable, "é") decomposes, yet NFC and NFKC leave it
  // as it is unless a character after it composes with it or is not a starter, which makes that
  // one unstable and the region start before it.
  // kCompatKept: a compatibility mapping newer than HF's forms (Unicode 11.0), which NFKC and
  // NFKD leave out as HF does (U+1F16C stays U+1F16C).
  static constexpr uint8_t kDecomposes = 1, kCompatDecomposes = 2, kNonStarter = 4,
                           kComposesAsSecond = 8, kNfcChanges = 16, kNfkcChanges = 32,
                           kCompatKept = 64;

  void keep_newer_compat_mappings();

  Tables() : flags(0x110000, 0) {
    utf8proc_int32_t buf[32];
    for (char32_t cp = 0; cp < 0x110000; ++cp) {
      if (cp >= 0xD800 && cp <= 0xDFFF) continue;
      const utf8proc_property_t* p = utf8proc_get_property(static_cast<utf8proc_int32_t>(cp));
      if (p->combining_class != 0) flags[cp] |= kNonStarter;
      if (p->decomp_seqindex == UINT16_MAX &&
          !(cp >= kHangulSBase && cp < kHangulSBase + kHangulSCount))
        continue;
      int bound = 0;
      utf8proc_ssize_t n = utf8proc_decompose_char(static_cast<utf8proc_int32_t>(cp), buf, 32,
                                                   UTF8PROC_DECOMPOSE, &bound);
      if (n > 1 || (n == 1 && static_cast<char32_t>(buf[0]) != cp)) flags[cp] |= kDecomposes;
      bound = 0;
      utf8proc_ssize_t m = utf8proc_decompose_char(
          static_cast<utf8proc_int32_t>(cp), buf, 32,
          static_cast<utf8proc_option_t>(UTF8PROC_DECOMPOSE | UTF8PROC_COMPAT), &bound);
      if (m > 1 || (m == 1 && static_cast<char32_t>(buf[0]) != cp)) flags[cp] |= kCompatDecomposes;
    }
    keep_newer_compat_mappings();
    for (char32_t cp = 0; cp < 0x110000; ++cp) {
      if (!(flags[cp] & (kDecomposes | kCompatDecomposes))) continue;
      if (cp >= kHangulSBase && cp < kHangulSBase + kHangulSCount) continue;
      if ((flags[cp] & kDecomposes) && !composes_to_itself(cp, UTF8PROC_COMPOSE))
        flags[cp] |= kNfcChanges;
      if (!composes_to_itself(cp,
                              static_cast<utf8proc_option_t>(UTF8PROC_COMPOSE | UTF8PROC_COMPAT)))
        flags[cp] |= kNfkcChanges;
    }
    // Primary composites: characters whose NFC is themselves and whose canonical decomposition
    // has two or more characters; the pair is (NFC of all but the last, the last).
    for (char32_t cp = 0; cp < 0x110000; ++cp) {
      if (!(flags[cp] & kDecomposes)) continue;
      if (cp >= kHangulSBase && cp < kHangulSBase + kHangulSCount) continue;
      int bound = 0;
      utf8proc_ssize_t n = utf8proc_decompose_char(static_cast<utf8proc_int32_t>(cp), buf, 32,
                                                   UTF8PROC_DECOMPOSE, &bound);
      if (n < 2 || (flags[cp] & kNfcChanges)) continue;
      std::string head;
      for (utf8proc_ssize_t k = 0; k + 1 < n; ++k) append_utf8(head, static_cast<char32_t>(buf[k]));
      utf8proc_uint8_t* h = utf8proc_NFC(reinterpret_cast<const utf8proc_uint8_t*>(head.c_str()));
      std::string first(reinterpret_cast<const char*>(h));
      std::free(h);
      size_t i = 0;
      char32_t f = decode_utf8(first, i);
      if (i != first.size()) continue;
      char32_t second = static_cast<char32_t>(buf[n - 1]);
      compose.emplace((uint64_t{f} << 21) | second, cp);
      flags[second] |= kComposesAsSecond;
    }
    for (char32_t cp = kHangulVBase; cp < kHangulVBase + kHangulVCount; ++cp)
      flags[cp] |= kComposesAsSecond;
    for (char32_t cp = kHangulTBase + 1; cp < kHangulTBase + kHangulTCount; ++cp)
      flags[cp] |= kComposesAsSecond;
  }
};

void Tables::keep_newer_compat_mappings() {
  for (const auto& [first, last] : kAssignedAfterFormsVersion)
    for (char32_t cp = first; cp <= last; ++cp)
      if ((flags[cp] & kCompatDecomposes) && !(flags[cp] & kDecomposes))
        flags[cp] = static_cast<uint8_t>((flags[cp] & ~kCompatDecomposes) | kCompatKept);
}

const Tables& tables() {
  static const Tables t;
  return t;
}

// The crate's char::compose, Hangul included.
bool compose(char32_t a, char32_t b, char32_t* out) {
  if (a >= kHangulLBase && a < kHangulLBase + kHangulLCount && b >= kHangulVBase &&
      b < kHangulVBase + kHangulVCount) {
    *out = kHangulSBase + ((a - kHangulLBase) * kHangulVCount + (b - kHangulVBase)) * kHangulTCount;
    return true;
  }
  if (a >= kHangulSBase && a < kHangulSBase + kHangulSCount &&
      (a - kHangulSBase) % kHangulTCount == 0 && b > kHangulTBase &&
      b < kHangulTBase + kHangulTCount) {
    *out = a + (b - kHangulTBase);
    return true;
  }
  const auto& m = tables().compose;
  auto it = m.find((uint64_t{a} << 21) | b);
  if (it == m.end()) return false;
  *out = it->second;
  return true;
}

struct Decomposed {
  uint8_t ccc;
  char32_t c;
  int change;
};

// Decompositions: each input character's full decomposition (first 0, others 1), then every
// run of non-starters stably sorted by combining class.
void decompose(std::string_view text, bool compat, std::vector<Decomposed>& out) {
  out.clear();
  utf8proc_int32_t buf[32];
  for (size_t i = 0; i < text.size();) {
    char32_t cp = decode_utf8(text, i);
    int bound = 0;
    const bool mapped = compat && !(tables().flags[cp] & Tables::kCompatKept);
    utf8proc_ssize_t n = utf8proc_decompose_char(
        static_cast<utf8proc_int32_t>(cp), buf, 32,
        static_cast<utf8proc_option_t>(UTF8PROC_DECOMPOSE | (mapped ? UTF8PROC_COMPAT : 0)),
        &bound);
    if (n <= 0) {
      buf[0] = static_cast<utf8proc_int32_t>(cp);
      n = 1;
    }
    for (utf8proc_ssize_t k = 0; k < n; ++k) {
      char32_t d = static_cast<char32_t>(buf[k]);
      out.push_back({combining_class(d), d, k == 0 ? 0 : 1});
    }
  }
  for (size_t i = 0; i < out.size();) {
    if (out[i].ccc == 0) {
      ++i;
      continue;
    }
    size_t j = i;
    while (j < out.size() && out[j].ccc != 0) ++j;
    std::stable_sort(out.begin() + static_cast<ptrdiff_t>(i),
                     out.begin() + static_cast<ptrdiff_t>(j),
                     [](const Decomposed& a, const Decomposed& b) { return a.ccc < b.ccc; });
    i = j;
  }
}

// The crate's Recompositions state machine, change arithmetic included.
void recompose(const std::vector<Decomposed>& in, std::vector<CharChange>& out) {
  struct Item {
    char32_t c;
    int change;
  };
  std::vector<Item> buffer;
  bool has_composee = false;
  Item composee{0, 0};
  bool has_last_ccc = false;
  uint8_t last_ccc = 0;
  auto emit = [&](Item it) { out.push_back({it.c, it.change}); };
  auto purge = [&]() {
    for (const Item& b : buffer) emit(b);
    buffer.clear();
  };
  for (const Decomposed& d : in) {
    const Item ch{d.c, d.change};
    const uint8_t ch_class = d.ccc;
    if (!has_composee) {
      if (ch_class != 0) {
        emit(ch);
        continue;
      }
      composee = ch;
      has_composee = true;
      continue;
    }
    char32_t r;
    if (!has_last_ccc) {
      if (compose(composee.c, ch.c, &r)) {
        composee = {r, composee.change + ch.change - 1};
        continue;
      }
      if (ch_class == 0) {
        emit(composee);
        composee = ch;
        continue;
      }
      buffer.push_back(ch);
      has_last_ccc = true;
      last_ccc = ch_class;
      continue;
    }
    if (last_ccc >= ch_class) {
      if (ch_class == 0) {
        emit(composee);
        composee = ch;
        has_last_ccc = false;
        purge();
        continue;
      }
      buffer.push_back(ch);
      last_ccc = ch_class;
      continue;
    }
    if (compose(composee.c, ch.c, &r)) {
      composee = {r, composee.change + ch.change - 1};
      continue;
    }
    buffer.push_back(ch);
    last_ccc = ch_class;
  }
  if (has_composee) emit(composee);
  purge();
}

}  // namespace

bool next_unstable_region(std::string_view text, size_t from, UnicodeForm form, size_t& begin,
                          size_t& end) {
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  const size_t n = text.size();
  size_t i = from + ascii_prefix(s + from, n - from);
  if (i == n) return false;
  const Tables& t = tables();
  const bool compat = form == UnicodeForm::kNFKD || form == UnicodeForm::kNFKC;
  const bool composing = form == UnicodeForm::kNFC || form == UnicodeForm::kNFKC;
  const uint8_t changes = composing ? (compat ? Tables::kNfkcChanges : Tables::kNfcChanges)
                                    : (compat ? Tables::kCompatDecomposes : Tables::kDecomposes);
  const uint8_t mask = Tables::kNonStarter | changes | (composing ? Tables::kComposesAsSecond : 0);
  // Whether the character at `at` is unstable; `at` moves past it.
  auto unstable = [&](size_t& at) {
    if (s[at] < 0x80) {
      ++at;
      return false;
    }
    return (t.flags[decode_utf8(text, at)] & mask) != 0;
  };
  size_t previous = i > from ? i - 1 : from;  // the character before i (ASCII when skipped)
  for (;;) {
    if (i == n) return false;
    if (s[i] < 0x80) {  // a run of ASCII between other characters (English with a few quotes)
      const size_t run = ascii_prefix(s + i, n - i);
      previous = i + run - 1;
      i += run;
      continue;
    }
    const size_t at = i;
    if (unstable(i)) {
      begin = at > from ? previous : from;
      break;
    }
    previous = at;
  }
  for (end = i; end < n;) {
    size_t next = end;
    if (!unstable(next)) break;
    end = next;
  }
  return true;
}

void unicode_form_changes(std::string_view text, UnicodeForm form, std::vector<CharChange>& out) {
  out.clear();
  thread_local std::vector<Decomposed> dec;
  const bool compat = form == UnicodeForm::kNFKD || form == UnicodeForm::kNFKC;
  decompose(text, compat, dec);
  if (form == UnicodeForm::kNFD || form == UnicodeForm::kNFKD) {
    for (const Decomposed& d : dec) out.push_back({d.c, d.change});
    return;
  }
  recompose(dec, out);
}

}  // namespace shardkit::tok
