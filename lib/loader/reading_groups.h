// Which positions of each global step a rank reads. The positions of a step go to g reading
// groups, position p to group p mod g; a group's positions, in order, are cut into runs of
// batch_size, one per member. Under the rows plan g = 1 (rank r takes the r-th run). Under the
// nodes plan, with W ranks, L per node (N = W / L nodes, rank r = local rank r mod L of node
// r div L) and C canonical partitions:
//   - if N divides C: g = N x L', L' = gcd(L, C / N); rank (n, l) is in group n + N x (l mod L'),
//     member l div L'. Node n's groups are those = n mod N, so it reads the partitions c = n
//     mod N and no others; with L' = L (W divides C) each rank reads partitions of its own.
//   - otherwise: g = gcd(N, C) and node n is in group n mod g with the nodes n' = n mod g, its
//     ranks members (n div g) x L + l: those nodes read the same blocks.
// Since g divides W, every run of B x W consecutive positions holds B x W / g of each group: a
// resume at any position, world size and batch size still splits each step exactly.
#pragma once

#include <cstdint>

#include "loader/loader_options.h"

namespace shardkit::loader {

struct ReadingGroups {
  uint32_t groups = 1;  // g
  uint32_t group = 0;   // this rank's
  uint32_t member = 0;  // its place among the group's W / g ranks
  uint32_t nodes = 1;
  uint32_t ranks_per_node = 1;
  // Whether each node reads blocks of its own (no other node reads its partitions).
  bool nodes_apart() const { return groups % nodes == 0; }
};

// Throws Error(kInvalidArgument) when ranks_per_node does not divide world_size (nodes plan).
ReadingGroups reading_groups(Partition partition, uint32_t partitions, uint32_t rank,
                             uint32_t world_size, uint32_t ranks_per_node);
// The same for the options' effective rank, world size and ranks per node.
ReadingGroups reading_groups(const LoaderOptions& options);

}  // namespace shardkit::loader
