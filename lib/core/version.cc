#include "core/version.h"

namespace shardkit {
// Compiled here alone, so a new version rebuilds one file.
const char kVersion[] = SHARDKIT_VERSION;
}  // namespace shardkit
