// Manifest::parse on fuzzed text. The first input byte selects the mode: odd = append the correct
// "manifest_xxh3" line to the rest, so that mutations get past the checksum to the JSON and
// validation behind it; even = the bytes as they are. A manifest that parses must survive
// serialize() -> parse() unchanged. Only shardkit::Error may come out.
#include <cstdint>
#include <string>

#include "core/checksum.h"
#include "core/error.h"
#include "core/manifest.h"
#include "format/shard_format.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace shardkit;
  if (size < 1) return 0;
  std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (data[0] & 1)
    text += format::kManifestChecksumPrefix + checksum_hex(xxh3_64(text.data(), text.size())) +
            format::kManifestChecksumSuffix;
  Manifest m;
  try {
    m = Manifest::parse(text, "fuzz/manifest.json");
  } catch (const Error& e) {
    if (e.file() != "fuzz/manifest.json") __builtin_trap();
    return 0;
  }
  const std::string again = m.serialize();
  try {
    if (Manifest::parse(again, "again").serialize() != again) __builtin_trap();
  } catch (const Error&) {
    __builtin_trap();  // what we accepted, we must be able to write back and read again
  }
  return 0;
}
