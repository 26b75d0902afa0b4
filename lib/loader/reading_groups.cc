#include "loader/reading_groups.h"

#include <numeric>
#include <string>

#include "core/error.h"
#include "loader/distributed_env.h"

namespace shardkit::loader {

ReadingGroups reading_groups(Partition partition, uint32_t partitions, uint32_t rank,
                             uint32_t world_size, uint32_t ranks_per_node) {
  ReadingGroups g;
  g.member = rank;
  if (partition == Partition::kRows) return g;
  const uint32_t l_count = ranks_per_node;
  if (l_count == 0 || world_size % l_count != 0)
    throw Error(ErrorCode::kInvalidArgument, "",
                "ranks_per_node " + std::to_string(l_count) + " does not divide world_size " +
                    std::to_string(world_size) +
                    ": partition='nodes' needs nodes with the same number of ranks");
  const uint32_t nodes = world_size / l_count, node = rank / l_count, local = rank % l_count;
  g.nodes = nodes;
  g.ranks_per_node = l_count;
  const uint32_t c = std::max<uint32_t>(1, partitions);
  const uint32_t node_groups = std::gcd(nodes, c);
  if (node_groups < nodes) {
    g.groups = node_groups;
    g.group = node % node_groups;
    g.member = node / node_groups * l_count + local;
    return g;
  }
  const uint32_t within = std::gcd(l_count, c / nodes);  // L'
  g.groups = nodes * within;
  g.group = node + nodes * (local % within);
  g.member = local / within;
  return g;
}

ReadingGroups reading_groups(const LoaderOptions& options) {
  return reading_groups(options.partition, options.partitions, effective_rank(options),
                        effective_world_size(options), effective_ranks_per_node(options));
}

}  // namespace shardkit::loader
