#include "loader/distributed_env.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <string>

#include "core/available_cores.h"
#include "core/error.h"

namespace shardkit::loader {
namespace {

uint32_t from_environment(const char* name, uint32_t fallback) {
  const char* text = std::getenv(name);
  if (!text || !*text) return fallback;
  char* end = nullptr;
  errno = 0;
  const unsigned long long v = std::strtoull(text, &end, 10);
  if (errno || *end || v >= LoaderOptions::kFromEnvironment || text[0] == '-')
    throw Error(ErrorCode::kInvalidArgument, "",
                std::string(name) + "='" + text + "' is not a rank or world size");
  return static_cast<uint32_t>(v);
}

}  // namespace

uint32_t effective_rank(const LoaderOptions& options) {
  return options.rank != LoaderOptions::kFromEnvironment ? options.rank
                                                         : from_environment("RANK", 0);
}

uint32_t effective_world_size(const LoaderOptions& options) {
  return options.world_size != LoaderOptions::kFromEnvironment ? options.world_size
                                                               : from_environment("WORLD_SIZE", 1);
}

uint32_t effective_ranks_per_node(const LoaderOptions& options) {
  if (options.ranks_per_node != LoaderOptions::kFromEnvironment) return options.ranks_per_node;
  return from_environment("LOCAL_WORLD_SIZE", effective_world_size(options));
}

unsigned default_thread_count(const LoaderOptions& options) {
  // Only what says how many ranks share this machine: an explicit ranks_per_node, or torchrun's
  // LOCAL_WORLD_SIZE. A bare world size may span many machines.
  const uint32_t local_ranks = options.ranks_per_node != LoaderOptions::kFromEnvironment
                                   ? options.ranks_per_node
                                   : from_environment("LOCAL_WORLD_SIZE", 1);
  return std::max(1u, available_cores() / std::max<uint32_t>(1, local_ranks));
}

void check_node_numbering(const LoaderOptions& options) {
  const char* names[] = {"RANK", "GROUP_RANK", "LOCAL_WORLD_SIZE", "LOCAL_RANK"};
  for (const char* name : names)
    if (!std::getenv(name) || !*std::getenv(name)) return;
  if (options.rank != LoaderOptions::kFromEnvironment ||
      options.ranks_per_node != LoaderOptions::kFromEnvironment)
    return;  // given explicitly: the caller's numbering
  const uint64_t rank = from_environment("RANK", 0), node = from_environment("GROUP_RANK", 0),
                 local_world = from_environment("LOCAL_WORLD_SIZE", 1),
                 local = from_environment("LOCAL_RANK", 0);
  if (rank == node * local_world + local) return;
  throw Error(ErrorCode::kInvalidArgument, "",
              "partition='nodes' numbers rank r as local rank r mod LOCAL_WORLD_SIZE of node r div "
              "LOCAL_WORLD_SIZE, but RANK=" +
                  std::to_string(rank) + ", GROUP_RANK=" + std::to_string(node) +
                  ", LOCAL_WORLD_SIZE=" + std::to_string(local_world) +
                  ", LOCAL_RANK=" + std::to_string(local) +
                  ": every node must run the same number of ranks (pass rank and "
                  "ranks_per_node to say how they are numbered)");
}

}  // namespace shardkit::loader
