// XXH3-64, the checksum of every stored block, index, header, footer and manifest.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace shardkit {

// Uses libxxhash's runtime-dispatched XXH3 (AVX2 where the CPU has it).
uint64_t xxh3_64(const void* data, size_t size);

// 16 lowercase hex digits, as the manifest writes checksums.
std::string checksum_hex(uint64_t value);
// Parses 16 hex digits; returns false on anything else.
bool parse_checksum_hex(const std::string& text, uint64_t* value);

}  // namespace shardkit
