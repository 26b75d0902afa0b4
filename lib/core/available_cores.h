// The cores this process may use.
#pragma once

namespace shardkit {

// The CPUs in this process's affinity mask (what taskset, Slurm and Kubernetes cpusets leave
// it), not every CPU of the machine as std::thread::hardware_concurrency() counts them, and no
// more than its cgroup's CPU limit allows (Kubernetes CPU limits, docker --cpus;
// cgroup_cpu_limit.h); at least 1. Thread counts given as 0 ("all cores") resolve to this.
unsigned available_cores();

}  // namespace shardkit
