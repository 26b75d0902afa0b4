// Who is building a staging directory (staged_directory.h): the marker file a writer puts in it
// first, and whether that writer is gone. A pid alone is not enough: pids are reused, and a
// directory shared over NFS holds staging directories of writers on other hosts, whose pids mean
// nothing here, and so do those of a writer in another PID namespace. The marker also names the
// boot, the process's start time and its PID namespace.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace shardkit {

struct StagingOwner {
  long pid = 0;
  std::string boot_id;     // /proc/sys/kernel/random/boot_id
  std::string start_time;  // field 22 of /proc/PID/stat: clock ticks after boot
  std::string host;        // gethostname
  // The PID namespace the pid belongs to: /proc/self/ns/pid's link text ("pid:[4026531836]").
  // Empty in a marker written before the field existed.
  std::string pid_ns;

  // This process.
  static StagingOwner current();
  // The marker file's text, and back (nullopt unless it is exactly such a text).
  std::string to_text() const;
  static std::optional<StagingOwner> parse(const std::string& text);
  // Whether this writer, from a marker written on this host, has ended: another boot, no
  // process with its pid, or a process with its pid that started at another time. A writer in
  // another PID namespace (a container sharing the host name and the volume) is gone only by
  // another boot: its pid names some other process here, or none.
  bool gone() const;
};

// The marker's name inside a staging directory.
inline constexpr const char* kStagingMarker = ".shardkit-staging";

// The pid in a staging directory's name `.NAME.partial-PID-RANDOM`; nullopt for other names.
std::optional<long> staging_name_pid(const std::string& name);

// The owner a staging directory's marker names; nullopt when the marker is missing, is not a
// regular file (a link is not followed), or does not parse.
std::optional<StagingOwner> read_staging_marker(const std::filesystem::path& dir);

// Whether `dir` holds nothing but a marker whose writing was cut short (a writer killed between
// creating the file and filling it): its text, possibly empty, begins a marker's first line.
bool holds_only_cut_marker(const std::filesystem::path& dir);

}  // namespace shardkit
