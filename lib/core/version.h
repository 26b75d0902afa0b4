#pragma once

namespace shardkit {
inline constexpr const char kVersion[] = "0.1.0";
}  // namespace shardkit
