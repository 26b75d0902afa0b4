// Schema::parse on fuzzed schema text (what a shard header carries). A schema that parses is
// canonical, so printing it must give back the input.
#include <cstdint>
#include <string_view>

#include "core/error.h"
#include "core/schema.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace shardkit;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const Schema s = Schema::parse(text);
    if (s.canonical() != text || s.record_size() == 0) __builtin_trap();
  } catch (const Error&) {
  }
  return 0;
}
