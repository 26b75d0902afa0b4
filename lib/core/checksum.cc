#include "core/checksum.h"

#include <xxh_x86dispatch.h>

namespace shardkit {

uint64_t xxh3_64(const void* data, size_t size) { return XXH3_64bits_dispatch(data, size); }

std::string checksum_hex(uint64_t value) {
  static const char kDigits[] = "0123456789abcdef";
  std::string s(16, '0');
  for (int i = 15; i >= 0; --i, value >>= 4) s[i] = kDigits[value & 15];
  return s;
}

bool parse_checksum_hex(const std::string& text, uint64_t* value) {
  if (text.size() != 16) return false;
  uint64_t v = 0;
  for (char c : text) {
    int d;
    if (c >= '0' && c <= '9')
      d = c - '0';
    else if (c >= 'a' && c <= 'f')
      d = c - 'a' + 10;
    else
      return false;
    v = v << 4 | static_cast<uint64_t>(d);
  }
  *value = v;
  return true;
}

}  // namespace shardkit
