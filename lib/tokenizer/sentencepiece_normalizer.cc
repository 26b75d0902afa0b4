#include "tokenizer/sentencepiece_normalizer.h"

#include "tokenizer/unicode.h"

namespace shardkit::tok {

namespace {

constexpr std::string_view kSpaceSymbol = "\xE2\x96\x81";

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

// normalize_prefix: the replacement for the start of `input` and the bytes it consumes.
std::pair<std::string_view, size_t> normalize_prefix(const SentencePieceNormalizerSpec& spec,
                                                     std::string_view input, size_t pos) {
  size_t best = 0;
  for (const std::string& u : spec.user_defined)
    if (u.size() > best && input.compare(pos, u.size(), u) == 0) best = u.size();
  if (best > 0) return {input.substr(pos, best), best};
  std::string_view replacement;
  size_t n = spec.charsmap ? spec.charsmap->longest_prefix(input, pos, &replacement) : 0;
  if (n > 0) return {replacement, n};
  size_t len = valid_char_length(input, pos);
  if (len == 0) return {"\xEF\xBF\xBD", 1};
  return {input.substr(pos, len), len};
}

}  // namespace

void sentencepiece_normalize(const SentencePieceNormalizerSpec& spec, std::string_view input,
                             NormalizedString& out) {
  std::string text;
  std::vector<Span> align;
  text.reserve(input.size() + 8);
  align.reserve(input.size() + 8);
  size_t pos = 0;
  if (spec.remove_extra_whitespaces) {
    while (pos < input.size()) {
      auto [sp, n] = normalize_prefix(spec, input, pos);
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
    auto [sp, n] = normalize_prefix(spec, input, pos);
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
