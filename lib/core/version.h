#pragma once

namespace shardkit {
inline constexpr const char kVersion[] = "0.2.0";
}  // namespace shardkit
