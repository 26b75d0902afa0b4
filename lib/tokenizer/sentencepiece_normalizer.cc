#include "tokenizer/sentencepiece_normalizer.h"

#include <algorithm>
#include <tuple>

#include "tokenizer/ascii_masks.h"
#include "tokenizer/escape_spaces.h"
#include "tokenizer/unicode.h"

namespace shardkit::tok {

namespace {

constexpr std::string_view kSpaceSymbol = kSentencePieceSpace;

// Length of a valid UTF-8 character at text[pos], or 0 when malformed.
size_t valid_char_length(std::string_view text, size_t pos) {
  size_t i = pos;
  try {
    decode_utf8(text, i);
  } catch (...) {
    return 0;
  }
  return i - pos;
}

constexpr char kAscii[129] =
    "\x00\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f"
    "\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f"
    " !\"#$%&'()*+,-./"
    "0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_`abcdefghijklmnopqrstuvwxyz{|}~\x7f";

// The end of the run of bytes from `pos` that the table maps to themselves (none a space): each
// but the last has an ASCII byte after it, and the last needs one too unless it maps alone.
// Printable bytes go 16 at a time where they all copy themselves: a byte-at-a-time loop
// mispredicted its exit at every word (a quarter of a BPE .model's time was this loop).
size_t end_of_copied_run(const SentencePieceNormalizerSpec& spec, std::string_view input,
                         size_t pos) {
  const auto byte = [&](size_t i) { return static_cast<unsigned char>(input[i]); };
  size_t e = pos;
  if (spec.printable_copy_themselves) {
    const auto* p = reinterpret_cast<const unsigned char*>(input.data());
    for (size_t n = 16; n == 16 && e + 16 <= input.size(); e += n) n = printable_prefix16(p + e);
  }
  while (e < input.size() && byte(e) < 0x80 && spec.ascii_copies_itself[byte(e)]) ++e;
  if (e > pos && e < input.size() && byte(e) >= 0x80 && !spec.ascii_alone[byte(e - 1)]) --e;
  return e;
}

// Copies the runs of bytes from `pos` that map to themselves, and the single spaces between
// them, to `text` (a space as `space`); returns where it stopped. The space between two words
// is taken here rather than by the general path: going back to it at every word mispredicted
// three branches a word.
size_t copy_words(const SentencePieceNormalizerSpec& spec, std::string_view input, size_t pos,
                  std::string_view space, std::string& text) {
  for (;;) {
    const size_t end = end_of_copied_run(spec, input, pos);
    if (end == pos) return pos;
    text.append(input.substr(pos, end - pos));
    pos = end;
    if (!spec.plain_space || pos + 1 >= input.size() || input[pos] != ' ') return pos;
    const auto next = static_cast<unsigned char>(input[pos + 1]);
    if (next >= 0x80 || !spec.ascii_copies_itself[next]) return pos;
    text.append(space);
    ++pos;
  }
}

// Appends the stretch of printable ASCII with single spaces from `pos` (escape_spaces.h) to
// `text`, spaces as U+2581; returns where it stopped.
size_t escape_stretch(std::string_view input, size_t pos, std::string& text) {
  constexpr size_t kStep = 4096;
  char escaped[2 * kStep + kEscapeSlack];
  const auto* p = reinterpret_cast<const unsigned char*>(input.data());
  for (;;) {
    size_t written;
    const size_t n = escape_spaced_ascii(p + pos, input.size() - pos, kStep, escaped, &written);
    text.append(escaped, written);
    pos += n;
    if (n < kStep) return pos;
  }
}

}  // namespace

std::pair<std::string_view, size_t> sentencepiece_normalize_prefix(
    const SentencePieceNormalizerSpec& spec, std::string_view input, size_t pos) {
  if (const size_t best = spec.user_defined_prefixes.longest(input, pos).length; best > 0)
    return {input.substr(pos, best), best};
  std::string_view replacement;
  size_t n = spec.charsmap ? spec.charsmap->longest_prefix(input, pos, &replacement) : 0;
  if (n > 0) return {replacement, n};
  size_t len = valid_char_length(input, pos);
  if (len == 0) return {"\xEF\xBF\xBD", 1};
  return {input.substr(pos, len), len};
}

void SentencePieceNormalizerSpec::prepare() {
  user_defined_prefixes = LongestPrefix();
  for (const std::string& u : user_defined)
    if (!u.empty()) user_defined_prefixes.add(u, 0);
  for (unsigned b = 0; b < 128; ++b) {
    const std::string_view one(kAscii + b, 1);
    bool user_defined_start = false;
    for (const std::string& u : user_defined)
      if (!u.empty() && static_cast<unsigned char>(u[0]) == b) user_defined_start = true;
    const auto byte = static_cast<unsigned char>(b);
    ascii_alone[b] = !user_defined_start && !(charsmap && charsmap->has_longer_key(byte));
    ascii_alone_before_ascii[b] =
        !user_defined_start && !(charsmap && charsmap->has_longer_key(byte, 1, 0x7F));
    if (ascii_alone_before_ascii[b])
      ascii_replacement[b] = sentencepiece_normalize_prefix(*this, one, 0).first;
    ascii_copies_itself[b] = ascii_alone_before_ascii[b] && ascii_replacement[b] == one && b != ' ';
  }
  plain_space = ascii_alone[' '] && ascii_replacement[' '] == " ";
  printable_copy_themselves = true;
  for (unsigned b = '!'; b <= '~'; ++b)
    printable_copy_themselves = printable_copy_themselves && ascii_copies_itself[b];
  escapes_spaced_ascii = printable_copy_themselves && plain_space && escape_whitespaces;
  find_characters_copying_themselves();
  ascii_ready = true;
}

void SentencePieceNormalizerSpec::find_characters_copying_themselves() {
  copies_itself.assign(0x10000 / 64, 0);
  std::vector<bool> starts_symbol(0x10000, false);
  for (const std::string& u : user_defined) {
    size_t i = 0;
    if (!u.empty() && valid_char_length(u, 0) > 0) {
      const char32_t first = decode_utf8(u, i);
      if (first < 0x10000) starts_symbol[first] = true;
    }
  }
  for (char32_t cp = 0x80; cp < 0x10000; ++cp) {
    if (cp >= 0xD800 && cp <= 0xDFFF) continue;
    if (starts_symbol[cp] || (charsmap && !charsmap->meets_no_key(cp))) continue;
    copies_itself[cp / 64] |= uint64_t{1} << (cp % 64);
  }
}

size_t SentencePieceNormalizerSpec::run_copying_itself(std::string_view input, size_t pos) const {
  const auto* p = reinterpret_cast<const unsigned char*>(input.data());
  const size_t n = input.size();
  for (;;) {
    const unsigned lead = pos < n ? p[pos] : 0;
    char32_t cp;
    size_t length;
    if (lead >= 0xC2 && lead < 0xE0 && pos + 1 < n && (p[pos + 1] & 0xC0) == 0x80) {
      cp = (char32_t{lead & 0x1Fu} << 6) | (p[pos + 1] & 0x3Fu);
      length = 2;
    } else if (lead >= 0xE0 && lead < 0xF0 && pos + 2 < n && (p[pos + 1] & 0xC0) == 0x80 &&
               (p[pos + 2] & 0xC0) == 0x80) {
      cp = (char32_t{lead & 0x0Fu} << 12) | (char32_t{p[pos + 1] & 0x3Fu} << 6) |
           (p[pos + 2] & 0x3Fu);
      length = 3;
      if (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF)) return pos;  // overlong, surrogate
    } else {
      return pos;
    }
    if (((copies_itself[cp / 64] >> (cp % 64)) & 1) == 0) return pos;
    pos += length;
  }
}

void sentencepiece_normalize(const SentencePieceNormalizerSpec& spec, std::string_view input,
                             NormalizedString& out) {
  std::string text;
  std::vector<Span> align;
  text.reserve(input.size() + 8);
  if (out.tracking()) align.reserve(input.size() + 8);  // 8 bytes a byte: only for offsets
  size_t pos = 0;
  if (spec.remove_extra_whitespaces) {
    while (pos < input.size()) {
      auto [sp, n] = sentencepiece_normalize_prefix(spec, input, pos);
      if (sp != " ") break;
      pos += n;
    }
  }
  if (pos >= input.size()) {
    out.set({}, {});
    return;
  }
  const std::string_view space = spec.escape_whitespaces ? kSpaceSymbol : std::string_view(" ");
  const bool track = out.tracking();
  auto add = [&](std::string_view bytes, size_t from, size_t to) {
    text.append(bytes);
    if (track)
      align.insert(align.end(), bytes.size(),
                   {static_cast<uint32_t>(from), static_cast<uint32_t>(to)});
  };
  if (spec.add_dummy_prefix) add(space, pos, pos);
  bool is_prev_space = spec.remove_extra_whitespaces;
  while (pos < input.size()) {
    const auto b = static_cast<unsigned char>(input[pos]);
    // Without offsets, letters and the like go over in runs, not a byte and a call at a time.
    if (!track && b < 0x80 && spec.ascii_ready && spec.ascii_copies_itself[b]) {
      size_t end = spec.escapes_spaced_ascii ? escape_stretch(input, pos, text) : pos;
      if (end == pos) end = copy_words(spec, input, pos, space, text);
      if (end > pos) {
        is_prev_space = false;
        pos = end;
        continue;
      }
    }
    if (!track && b >= 0x80 && spec.ascii_ready) {
      if (const size_t end = spec.run_copying_itself(input, pos); end > pos) {
        text.append(input.substr(pos, end - pos));
        is_prev_space = false;
        pos = end;
        continue;
      }
    }
    std::string_view sp;
    size_t n = 1;
    if (b < 0x80 && spec.ascii_ready && spec.ascii_by_table(input, pos)) {
      sp = spec.ascii_replacement[b];
    } else {
      std::tie(sp, n) = sentencepiece_normalize_prefix(spec, input, pos);
    }
    if (is_prev_space)
      while (!sp.empty() && sp[0] == ' ') sp.remove_prefix(1);
    if (!sp.empty()) {
      for (char c : sp) {
        if (spec.escape_whitespaces && c == ' ') {
          add(kSpaceSymbol, pos, pos + n);
        } else {
          add(std::string_view(&c, 1), pos, pos + n);
        }
      }
      is_prev_space = sp.back() == ' ';
    }
    pos += n;
    if (!spec.remove_extra_whitespaces) is_prev_space = false;
  }
  if (spec.remove_extra_whitespaces) {
    while (text.size() >= space.size() &&
           text.compare(text.size() - space.size(), space.size(), space) == 0) {
      text.resize(text.size() - space.size());
      if (track) align.resize(text.size());
    }
  }
  out.set(std::move(text), std::move(align));
}

}  // namespace shardkit::tok
