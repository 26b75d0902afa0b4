// A cgroup's CPU limit bounds "all cores": mountinfo and /proc/self/cgroup as the kernel writes
// them for cgroup v2, v1 and a container's view, read from files the test writes; then a real
// cgroup with a limit of one CPU around `shardify --print-options`.
#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "../test_util.h"
#include "core/available_cores.h"
#include "core/cgroup_cpu_limit.h"

namespace fs = std::filesystem;
using shardkit::cgroup_cpu_limit;
using shardkit::CgroupFiles;

namespace {

// A fake /proc/self and cgroup file system under one directory.
struct FakeCgroups {
  shardkit::testing::TempDir tmp{"cgroups"};
  CgroupFiles files{tmp / "self_cgroup", tmp / "mountinfo"};

  void write(const fs::path& file, const std::string& text) {
    fs::create_directories(file.parent_path());
    std::ofstream(file) << text;
  }
  // A mountinfo line for a cgroup file system mounted at `point` (under tmp) showing `root`.
  std::string mount(const std::string& root, const std::string& point, const std::string& type,
                    const std::string& options) {
    return "30 25 0:26 " + root + " " + (tmp / point).string() +
           " rw,nosuid,nodev,noexec,relatime shared:4 - " + type + " " + type + " " + options +
           "\n";
  }
};

}  // namespace

TEST_CASE("cgroup v2: the tightest cpu.max on the way up, rounded up to whole CPUs") {
  FakeCgroups f;
  f.write(f.files.self_mountinfo, "22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n" +
                                      f.mount("/", "sys/fs/cgroup", "cgroup2", "rw,nsdelegate"));
  f.write(f.files.self_cgroup, "0::/kubepods/pod1/ctr\n");
  const fs::path base = f.tmp / "sys/fs/cgroup";
  f.write(base / "cpu.max", "max 100000\n");
  f.write(base / "kubepods/pod1/ctr/cpu.max", "250000 100000\n");
  CHECK(cgroup_cpu_limit(f.files) == 3u);
  f.write(base / "kubepods/cpu.max", "150000 100000\n");  // a parent's limit bounds its child
  CHECK(cgroup_cpu_limit(f.files) == 2u);
  f.write(base / "kubepods/cpu.max", "max 100000\n");
  f.write(base / "kubepods/pod1/ctr/cpu.max", "5000 100000\n");  // a twentieth of a CPU
  CHECK(cgroup_cpu_limit(f.files) == 1u);
  f.write(base / "kubepods/pod1/ctr/cpu.max", "max 100000\n");
  CHECK_FALSE(cgroup_cpu_limit(f.files).has_value());
}

TEST_CASE("cgroup v1: cpu.cfs_quota_us over cpu.cfs_period_us, the controller co-mounted") {
  FakeCgroups f;
  f.write(f.files.self_mountinfo, f.mount("/", "cg/memory", "cgroup", "rw,memory") +
                                      f.mount("/", "cg/cpu,cpuacct", "cgroup", "rw,cpu,cpuacct") +
                                      f.mount("/", "cg/unified", "cgroup2", "rw"));
  f.write(f.files.self_cgroup, "5:memory:/docker/abc\n4:cpu,cpuacct:/docker/abc\n0::/\n");
  const fs::path dir = f.tmp / "cg/cpu,cpuacct/docker/abc";
  f.write(dir / "cpu.cfs_quota_us", "-1\n");
  f.write(dir / "cpu.cfs_period_us", "100000\n");
  CHECK_FALSE(cgroup_cpu_limit(f.files).has_value());
  f.write(dir / "cpu.cfs_quota_us", "400000\n");
  CHECK(cgroup_cpu_limit(f.files) == 4u);
  // The memory controller's files are not the CPU's.
  f.write(f.tmp / "cg/memory/docker/abc/cpu.cfs_quota_us", "100000\n");
  f.write(f.tmp / "cg/memory/docker/abc/cpu.cfs_period_us", "100000\n");
  CHECK(cgroup_cpu_limit(f.files) == 4u);
}

TEST_CASE("a container sees its own cgroup at the mount point, under an escaped path") {
  FakeCgroups f;
  // The mount shows /docker/abc (the container's cgroup) at a point whose name holds a space,
  // which mountinfo writes as \040.
  f.write(f.files.self_mountinfo, "30 25 0:26 /docker/abc " + (f.tmp / "my").string() +
                                      "\\040cgroup rw shared:4 - cgroup2 cgroup2 rw\n");
  f.write(f.files.self_cgroup, "0::/docker/abc/worker\n");
  f.write(f.tmp / "my cgroup/cpu.max", "200000 100000\n");
  f.write(f.tmp / "my cgroup/worker/cpu.max", "max 100000\n");
  CHECK(cgroup_cpu_limit(f.files) == 2u);
  // A cgroup the mount does not show (a sibling of its root) is not guessed at.
  f.write(f.files.self_cgroup, "0::/docker/abcd\n");
  CHECK_FALSE(cgroup_cpu_limit(f.files).has_value());
}

TEST_CASE("missing or garbled files mean no limit, never an error") {
  FakeCgroups f;
  CHECK_FALSE(cgroup_cpu_limit(f.files).has_value());  // no files at all
  f.write(f.files.self_mountinfo, f.mount("/", "cg", "cgroup2", "rw") + "garbage\n\n- - -\n");
  f.write(f.files.self_cgroup, "nonsense\n0::/a\n");
  CHECK_FALSE(cgroup_cpu_limit(f.files).has_value());  // no cpu.max
  for (const char* text : {"", "abc 100000", "100000", "100000 0", "-5 100000", "100000 abc"}) {
    f.write(f.tmp / "cg/a/cpu.max", text);
    CHECK_MESSAGE(!cgroup_cpu_limit(f.files).has_value(), text);
  }
  f.write(f.tmp / "cg/a/cpu.max", "100000 100000");
  CHECK(cgroup_cpu_limit(f.files) == 1u);
}

TEST_CASE("shardify --threads 0 in a real cgroup limited to one CPU") {
  // cgroup v1's cpu controller where this machine mounts it writable (as root), and lets a
  // process move into a new group; the cases above cover the rules wherever it does not.
  const fs::path controller = "/sys/fs/cgroup/cpu";
  const fs::path group = controller / ("shardkit-test-" + std::to_string(::getpid()));
  std::error_code ec;
  if (!fs::exists(controller / "cpu.cfs_quota_us") || !fs::create_directory(group, ec)) {
    MESSAGE("not run: no writable cgroup v1 cpu controller at ", controller.string());
    return;
  }
  std::ofstream(group / "cpu.cfs_period_us") << "100000\n";
  std::ofstream(group / "cpu.cfs_quota_us") << "100000\n";
  std::string quota;
  std::ifstream(group / "cpu.cfs_quota_us") >> quota;
  std::string out;
  // 77: the child could not move into the group; anything else is shardify's exit status.
  const int rc =
      quota != "100000"
          ? 77
          : shardkit::testing::run_command(
                "sh -c 'echo $$ > " + (group / "cgroup.procs").string() + " || exit 77; exec " +
                    shardkit::testing::tool_path("shardify/shardify") + " --print-options'",
                &out);
  fs::remove(group, ec);
  if (rc == 77) {
    MESSAGE("not run: this machine does not let a process into a new cgroup with a CPU limit");
    return;
  }
  REQUIRE(rc == 0);
  CHECK(out.find("\"threads\":1,") != std::string::npos);
  MESSAGE("outside it: ", shardkit::available_cores(), " cores");
}
