#include "core/cgroup_cpu_limit.h"

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace shardkit {
namespace fs = std::filesystem;
namespace {

// Where a cgroup hierarchy is mounted: `root` is the cgroup shown at `point` (a container often
// sees its own cgroup there, not the hierarchy's root).
struct Mount {
  std::string root;
  fs::path point;
};

// The two hierarchies that can hold a CPU limit: cgroup v2, and v1's cpu controller.
struct Hierarchies {
  std::optional<Mount> v2_mount, v1_mount;
  std::optional<std::string> v2_path, v1_path;  // this process's cgroup in each
};

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> parts;
  for (size_t from = 0;;) {
    const size_t at = s.find(sep, from);
    parts.push_back(
        s.substr(from, at == std::string_view::npos ? std::string_view::npos : at - from));
    if (at == std::string_view::npos) return parts;
    from = at + 1;
  }
}

bool lists(std::string_view comma_list, std::string_view item) {
  const auto items = split(comma_list, ',');
  return std::find(items.begin(), items.end(), item) != items.end();
}

// mountinfo writes a space, tab, newline or backslash in a path as three octal digits (\040).
std::string unescape_octal(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    const bool escape = s[i] == '\\' && i + 3 < s.size() &&
                        std::all_of(s.begin() + i + 1, s.begin() + i + 4,
                                    [](char c) { return c >= '0' && c <= '7'; });
    if (!escape) {
      out.push_back(s[i]);
      continue;
    }
    out.push_back(
        static_cast<char>((s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 + (s[i + 3] - '0')));
    i += 3;
  }
  return out;
}

// "36 35 98:0 /root /mount/point rw,noatime shared:1 - cgroup2 cgroup2 rw": the fields after
// " - " are the file system type, its source and its options (v1's name its controllers).
void read_mounts(const fs::path& mountinfo, Hierarchies& h) {
  std::ifstream in(mountinfo);
  for (std::string line; std::getline(in, line);) {
    const auto fields = split(line, ' ');
    const auto dash = std::find(fields.begin(), fields.end(), "-");
    if (fields.size() < 5 || dash == fields.end() || fields.end() - dash < 4) continue;
    Mount m{unescape_octal(fields[3]), fs::path(unescape_octal(fields[4]))};
    if (dash[1] == "cgroup2" && !h.v2_mount)
      h.v2_mount = std::move(m);
    else if (dash[1] == "cgroup" && lists(dash[3], "cpu") && !h.v1_mount)
      h.v1_mount = std::move(m);
  }
}

// "0::/a/b" is the process's cgroup v2; "4:cpu,cpuacct:/a" its cgroup of v1's cpu controller.
void read_paths(const fs::path& self_cgroup, Hierarchies& h) {
  std::ifstream in(self_cgroup);
  for (std::string line; std::getline(in, line);) {
    const size_t first = line.find(':'), second = line.find(':', first + 1);
    if (first == std::string::npos || second == std::string::npos) continue;
    const std::string_view controllers =
        std::string_view(line).substr(first + 1, second - first - 1);
    std::string path = line.substr(second + 1);
    if (line.compare(0, first, "0") == 0 && controllers.empty())
      h.v2_path = std::move(path);
    else if (lists(controllers, "cpu"))
      h.v1_path = std::move(path);
  }
}

// The directory of cgroup `path` under `m`; none where the mount does not show that cgroup.
std::optional<fs::path> directory_of(const Mount& m, const std::string& path) {
  std::string_view rest = path;
  if (m.root != "/") {
    if (!rest.starts_with(m.root) || (rest.size() > m.root.size() && rest[m.root.size()] != '/'))
      return std::nullopt;
    rest.remove_prefix(m.root.size());
  }
  while (rest.starts_with('/')) rest.remove_prefix(1);
  return (m.point / rest).lexically_normal();
}

std::optional<int64_t> read_number(std::istream& in) {
  int64_t n = 0;
  if (!(in >> n)) return std::nullopt;
  return n;
}

// CPUs from a quota and a period in microseconds; none for "no limit" (v1's -1).
std::optional<unsigned> cpus(std::optional<int64_t> quota, std::optional<int64_t> period) {
  if (!quota || !period || *quota <= 0 || *period <= 0) return std::nullopt;
  return static_cast<unsigned>(std::max<int64_t>(1, (*quota + *period - 1) / *period));
}

// cgroup v2: cpu.max holds "QUOTA PERIOD", or "max PERIOD" for none.
std::optional<unsigned> v2_limit(const fs::path& dir) {
  std::ifstream in(dir / "cpu.max");
  std::string quota;
  if (!(in >> quota) || quota == "max") return std::nullopt;
  std::istringstream q(quota);
  return cpus(read_number(q), read_number(in));
}

std::optional<unsigned> v1_limit(const fs::path& dir) {
  std::ifstream quota(dir / "cpu.cfs_quota_us"), period(dir / "cpu.cfs_period_us");
  return cpus(read_number(quota), read_number(period));
}

// The tightest limit from `dir` up to the mount point: a parent's limit bounds its children.
template <typename Limit>
std::optional<unsigned> tightest(const fs::path& dir, const fs::path& top, Limit limit) {
  std::optional<unsigned> least;
  for (fs::path p = dir;; p = p.parent_path()) {
    if (const auto l = limit(p); l && (!least || *l < *least)) least = l;
    if (p == top || !p.has_relative_path() || p == p.parent_path()) return least;
  }
}

std::optional<unsigned> least_of(std::optional<unsigned> a, std::optional<unsigned> b) {
  if (a && b) return std::min(*a, *b);
  return a ? a : b;
}

}  // namespace

std::optional<unsigned> cgroup_cpu_limit(const CgroupFiles& files) {
  Hierarchies h;
  read_mounts(files.self_mountinfo, h);
  read_paths(files.self_cgroup, h);
  std::optional<unsigned> limit;
  if (h.v2_mount && h.v2_path)
    if (const auto dir = directory_of(*h.v2_mount, *h.v2_path))
      limit = least_of(limit, tightest(*dir, h.v2_mount->point.lexically_normal(), v2_limit));
  if (h.v1_mount && h.v1_path)
    if (const auto dir = directory_of(*h.v1_mount, *h.v1_path))
      limit = least_of(limit, tightest(*dir, h.v1_mount->point.lexically_normal(), v1_limit));
  return limit;
}

}  // namespace shardkit
