// Rank and world size left unset in LoaderOptions come from the environment torchrun (and
// torch.distributed's env:// init) sets: RANK and WORLD_SIZE; without them, 0 and 1.
#pragma once

#include <cstdint>

#include "loader/loader_options.h"

namespace shardkit::loader {

// Throws Error(kInvalidArgument) naming the variable when it is set but not a number.
uint32_t effective_rank(const LoaderOptions& options);
uint32_t effective_world_size(const LoaderOptions& options);

}  // namespace shardkit::loader
