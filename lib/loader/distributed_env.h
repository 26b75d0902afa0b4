// Rank, world size and ranks per node left unset in LoaderOptions come from the environment
// torchrun (and torch.distributed's env:// init) sets: RANK, WORLD_SIZE and LOCAL_WORLD_SIZE;
// without them, 0, 1 and the world size (one node).
#pragma once

#include <cstdint>

#include "loader/loader_options.h"

namespace shardkit::loader {

// Throws Error(kInvalidArgument) naming the variable when it is set but not a number.
uint32_t effective_rank(const LoaderOptions& options);
uint32_t effective_world_size(const LoaderOptions& options);
uint32_t effective_ranks_per_node(const LoaderOptions& options);
// threads = 0: the cores this process may use, shared among the ranks on this machine
// (ranks_per_node, else LOCAL_WORLD_SIZE), so that torchrun's 8 ranks on a 96-core node start 12
// threads each, not 96.
unsigned default_thread_count(const LoaderOptions& options);
// Under torchrun, whether RANK = GROUP_RANK x LOCAL_WORLD_SIZE + LOCAL_RANK, the numbering the
// nodes plan assumes (it fails where nodes run different numbers of ranks): throws
// Error(kInvalidArgument) naming the four variables when they are all set and disagree.
void check_node_numbering(const LoaderOptions& options);

}  // namespace shardkit::loader
