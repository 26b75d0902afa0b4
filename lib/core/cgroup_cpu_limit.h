// The CPU bandwidth a cgroup allows this process: Kubernetes' CPU limits, Docker's --cpus,
// systemd's CPUQuota. Such a limit leaves every CPU in the affinity mask and lets the process's
// threads together run `quota` microseconds each `period`; more threads than that only wait
// for the next period, holding what they were working on.
#pragma once

#include <filesystem>
#include <optional>

namespace shardkit {

// Where the kernel describes this process's cgroups; tests point these at files of their own.
struct CgroupFiles {
  std::filesystem::path self_cgroup = "/proc/self/cgroup";
  std::filesystem::path self_mountinfo = "/proc/self/mountinfo";
};

// ceil(quota / period) for the tightest CPU limit on the process's cgroup and its ancestors,
// under cgroup v2 (`cpu.max`) and v1 (`cpu.cfs_quota_us`, `cpu.cfs_period_us`); at least 1.
// None where no limit is set, or where the files are missing or unreadable: then the affinity
// mask alone counts.
std::optional<unsigned> cgroup_cpu_limit(const CgroupFiles& files = {});

}  // namespace shardkit
