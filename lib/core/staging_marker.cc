#include "core/staging_marker.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <sstream>

namespace shardkit {
namespace {

constexpr const char* kFirstLine = "shardkit staging directory";

// A small regular file's text (at most 4 KiB), read without following a link or blocking on a
// FIFO. Files of /proc report a size of 0: read to the end, whatever the size says.
std::optional<std::string> read_small(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  struct stat st {};
  std::string text;
  bool ok = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
  char buf[4097];
  size_t used = 0;
  while (ok && used < sizeof buf) {
    const ssize_t n = ::read(fd, buf + used, sizeof buf - used);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) ok = false;
    if (n <= 0) break;
    used += static_cast<size_t>(n);
  }
  ::close(fd);
  if (!ok || used == 0 || used == sizeof buf) return std::nullopt;
  return std::string(buf, used);
}

std::string trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

std::string read_boot_id() {
  return trimmed(read_small("/proc/sys/kernel/random/boot_id").value_or(""));
}

// Field 22 of /proc/PID/stat (after the command name, which may hold spaces and parentheses).
std::string start_time_of(long pid) {
  const auto stat = read_small("/proc/" + std::to_string(pid) + "/stat");
  if (!stat) return "";
  const size_t paren = stat->rfind(')');
  if (paren == std::string::npos) return "";
  std::istringstream fields(stat->substr(paren + 1));
  std::string field;
  for (int i = 3; i <= 22 && fields >> field; ++i) {
  }
  return field;
}

// This process's PID namespace, as the link /proc/self/ns/pid reads ("pid:[4026531836]"); empty
// when it cannot be read.
std::string read_pid_ns() {
  char buf[128];
  const ssize_t n = ::readlink("/proc/self/ns/pid", buf, sizeof buf);
  return n > 0 && static_cast<size_t>(n) < sizeof buf ? std::string(buf, n) : "";
}

bool digits(const std::string& s) {
  return !s.empty() && s.size() <= 18 && s.find_first_not_of("0123456789") == std::string::npos;
}

}  // namespace

StagingOwner StagingOwner::current() {
  StagingOwner o;
  o.pid = ::getpid();
  o.boot_id = read_boot_id();
  o.start_time = start_time_of(o.pid);
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  o.host = host;
  o.pid_ns = read_pid_ns();
  return o;
}

std::string StagingOwner::to_text() const {
  return std::string(kFirstLine) + "\npid " + std::to_string(pid) + "\nboot " + boot_id +
         "\nstart " + start_time + "\nhost " + host + "\npidns " + pid_ns + "\n";
}

std::optional<StagingOwner> StagingOwner::parse(const std::string& text) {
  std::istringstream lines(text);
  std::string line, key;
  if (!std::getline(lines, line) || line != kFirstLine) return std::nullopt;
  StagingOwner o;
  std::string pid;
  for (auto [name, value] : {std::pair{"pid ", &pid}, std::pair{"boot ", &o.boot_id},
                             std::pair{"start ", &o.start_time}, std::pair{"host ", &o.host}}) {
    if (!std::getline(lines, line) || line.rfind(name, 0) != 0) return std::nullopt;
    *value = line.substr(std::char_traits<char>::length(name));
  }
  // A marker written before the pidns line existed ends after host.
  if (std::getline(lines, line)) {
    if (line.rfind("pidns ", 0) != 0) return std::nullopt;
    o.pid_ns = line.substr(6);
  }
  if (!digits(pid) || std::getline(lines, line)) return std::nullopt;
  o.pid = std::stol(pid);
  return o;
}

bool StagingOwner::gone() const {
  if (boot_id != read_boot_id()) return true;
  // An older marker has no namespace: its pid is taken as this namespace's, as it always was.
  if (!pid_ns.empty() && pid_ns != read_pid_ns()) return false;
  if (pid <= 0 || (::kill(static_cast<pid_t>(pid), 0) != 0 && errno != EPERM)) return true;
  const std::string now = start_time_of(pid);
  return !now.empty() && now != start_time;
}

std::optional<long> staging_name_pid(const std::string& name) {
  const std::string infix = ".partial-";
  const size_t at = name.rfind(infix);
  if (name.size() < 2 || name[0] != '.' || at == std::string::npos || at < 2) return std::nullopt;
  const std::string rest = name.substr(at + infix.size());
  const size_t dash = rest.find('-');
  if (dash == std::string::npos || !digits(rest.substr(0, dash)) || !digits(rest.substr(dash + 1)))
    return std::nullopt;
  return std::stol(rest.substr(0, dash));
}

std::optional<StagingOwner> read_staging_marker(const std::filesystem::path& dir) {
  const auto text = read_small(dir / kStagingMarker);
  return text ? StagingOwner::parse(*text) : std::nullopt;
}

bool holds_only_cut_marker(const std::filesystem::path& dir) {
  std::error_code ec;
  size_t entries = 0;
  for (auto it = std::filesystem::directory_iterator(dir, ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec))
    if (++entries > 1 || it->path().filename() != kStagingMarker) return false;
  if (ec || entries != 1) return false;
  const std::filesystem::path marker = dir / kStagingMarker;
  if (!std::filesystem::is_regular_file(std::filesystem::symlink_status(marker, ec))) return false;
  // read_small refuses an empty file; an empty marker is the most likely cut.
  if (std::filesystem::file_size(marker, ec) == 0 && !ec) return true;
  const auto text = read_small(marker);
  const std::string first(kFirstLine);
  return text && text->size() <= first.size() && first.compare(0, text->size(), *text) == 0;
}

}  // namespace shardkit
