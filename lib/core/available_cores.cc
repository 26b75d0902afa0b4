#include "core/available_cores.h"

#include <sched.h>

#include <algorithm>
#include <thread>

#include "core/cgroup_cpu_limit.h"

namespace shardkit {
namespace {

unsigned affinity_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) return std::max(1, CPU_COUNT(&set));
  return std::max(1u, std::thread::hardware_concurrency());
}

}  // namespace

unsigned available_cores() {
  const unsigned cpus = affinity_cpus();
  const std::optional<unsigned> limit = cgroup_cpu_limit();
  return limit ? std::max(1u, std::min(cpus, *limit)) : cpus;
}

}  // namespace shardkit
