// shardkit's version, from the VERSION file at the top of the source tree (CMakeLists.txt).
#pragma once

namespace shardkit {
extern const char kVersion[];
}  // namespace shardkit
