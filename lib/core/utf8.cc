#include "core/utf8.h"

#include <simdjson.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include "core/parallel_ranges.h"

namespace shardkit {

namespace {

// simdjson's validator spends about 15 ns a call before its first byte (its dispatch and
// set-up), which a tokenizer called once per short document paid on every call. ASCII is valid
// UTF-8, and 32 bytes at a time a plain test says so sooner, up to about this many bytes.
constexpr size_t kAsciiTestBytes = 1024;

bool short_ascii(std::string_view text) {
  if (text.size() > kAsciiTestBytes) return false;
  const char* p = text.data();
  const size_t n = text.size();
  constexpr uint64_t kHigh = 0x8080808080808080ULL;
  size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    uint64_t w[4];
    std::memcpy(w, p + i, 32);
    if (((w[0] | w[1] | w[2] | w[3]) & kHigh) != 0) return false;
  }
  uint64_t acc = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    std::memcpy(&w, p + i, 8);
    acc |= w;
  }
  if (n >= 8) {  // the last bytes, read as one word ending where the text does
    uint64_t w;
    std::memcpy(&w, p + n - 8, 8);
    acc |= w;
  } else {  // byte by byte: a copy of a variable length is a library call
    for (; i < n; ++i) acc |= static_cast<unsigned char>(p[i]);
  }
  return (acc & kHigh) == 0;
}

}  // namespace

std::optional<size_t> first_invalid_utf8(std::string_view text) {
  if (short_ascii(text) || simdjson::validate_utf8(text.data(), text.size())) return std::nullopt;
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  const size_t n = text.size();
  size_t i = 0;
  while (i < n) {
    unsigned char c = s[i];
    size_t len;
    uint32_t cp;
    if (c < 0x80) {
      ++i;
      continue;
    } else if ((c & 0xE0) == 0xC0) {
      len = 2, cp = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
      len = 3, cp = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
      len = 4, cp = c & 0x07;
    } else {
      return i;
    }
    if (i + len > n) return i;
    for (size_t k = 1; k < len; ++k) {
      if ((s[i + k] & 0xC0) != 0x80) return i;
      cp = (cp << 6) | (s[i + k] & 0x3F);
    }
    const bool overlong =
        (len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000);
    if (overlong || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return i;
    i += len;
  }
  return n;  // simdjson disagreed with this scan; report the end rather than accept
}

std::optional<size_t> code_point_to_byte(std::string_view text, size_t index) {
  size_t seen = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    if ((static_cast<unsigned char>(text[i]) & 0xC0) == 0x80) continue;
    if (seen == index) return i;
    ++seen;
  }
  if (seen == index) return text.size();
  return std::nullopt;
}

std::optional<size_t> first_invalid_utf8_in_parallel(std::string_view text) {
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  // Range starts after the first moved past continuation bytes (at most three, in valid text),
  // which stay at the end of the range before. The first starts where the text does.
  std::vector<size_t> starts;
  for (size_t at = 0; at < text.size(); at += kParallelRangeBytes) {
    size_t start = at;
    while (at > 0 && start < text.size() && start < at + 4 && (s[start] & 0xC0) == 0x80) ++start;
    if (starts.empty() || start > starts.back()) starts.push_back(start);
  }
  starts.push_back(text.size());
  std::atomic<bool> invalid{false};
  for_each_range(starts.size() - 1, 1, [&](size_t first, size_t last) {
    for (size_t i = first; i < last; ++i)
      if (!simdjson::validate_utf8(text.data() + starts[i], starts[i + 1] - starts[i]))
        invalid = true;
  });
  return invalid ? first_invalid_utf8(text) : std::nullopt;
}

bool contains_byte_in_parallel(std::string_view text, char byte) {
  std::atomic<bool> found{false};
  for_each_range(text.size(), kParallelRangeBytes, [&](size_t begin, size_t end) {
    if (std::memchr(text.data() + begin, byte, end - begin)) found = true;
  });
  return found;
}

std::string escape_invalid_utf8(std::string_view text) {
  std::string out;
  while (const std::optional<size_t> bad = first_invalid_utf8(text)) {
    char hex[5];
    std::snprintf(hex, sizeof hex, "\\x%02X", static_cast<unsigned char>(text[*bad]));
    out.append(text.substr(0, *bad)).append(hex);
    text.remove_prefix(*bad + 1);
  }
  return out.append(text);
}

std::string escape_for_one_line(std::string_view text) {
  std::string out;
  for (const char c : escape_invalid_utf8(text)) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte >= 0x20 && byte != 0x7F) {
      out += c;
      continue;
    }
    char hex[5];
    std::snprintf(hex, sizeof hex, "\\x%02X", byte);
    out += hex;
  }
  return out;
}

}  // namespace shardkit
