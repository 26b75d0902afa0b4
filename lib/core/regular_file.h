// Files read whole by name (a tokenizer, a chat template) must be regular files: a directory
// opens as a stream whose size reads as the largest offset, a device never ends (/dev/zero),
// and a FIFO blocks the open itself, where no Ctrl-C reaches.
#pragma once

#include <filesystem>
#include <string>

#include "core/error.h"

namespace shardkit {

// Throws Error(kInvalidArgument) naming `path` when it exists and is not a regular file:
// "not a `what` but a directory, pipe or device: name `instead`". A missing path is left to the
// open that follows, which says so.
inline void check_regular_file(const std::filesystem::path& path, const std::string& what,
                               const std::string& instead) {
  std::error_code ec;
  if (std::filesystem::exists(path, ec) && !std::filesystem::is_regular_file(path, ec))
    throw Error(ErrorCode::kInvalidArgument, path.string(),
                "not a " + what + " but a directory, pipe or device: name " + instead);
}

}  // namespace shardkit
