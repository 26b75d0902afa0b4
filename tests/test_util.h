// Helpers shared by the test programs: scratch directories and deterministic random data.
#pragma once

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <string_view>
#include <vector>

namespace shardkit::testing {

// A JSON string literal for building test inputs.
inline std::string json_string(std::string_view text) {
  return nlohmann::json(std::string(text)).dump();
}

// A fresh directory under the build tree's tmp/, removed when the object goes away.
class TempDir {
 public:
  explicit TempDir(const std::string& tag = "t") {
    static int counter = 0;
    path_ = std::filesystem::path(SHARDKIT_BINARY_DIR) / "test-tmp" /
            (tag + "-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

// `min_parts` to `min_parts + spread - 1` of `parts` (repeats allowed), joined in random order.
inline std::string random_join(const std::vector<std::string>& parts, unsigned min_parts,
                               unsigned spread, std::mt19937& random) {
  std::string joined;
  for (unsigned n = min_parts + static_cast<unsigned>(random() % spread); n > 0; --n)
    joined += parts[random() % parts.size()];
  return joined;
}

inline std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

inline void write_file(const std::filesystem::path& p, const std::string& bytes) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// The names of the entries of `dir`, sorted.
inline std::vector<std::string> sorted_names(const std::filesystem::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

// Runs a shell command, returns its exit status and captures stdout.
inline int run_command(const std::string& cmd, std::string* out = nullptr) {
  std::string full = cmd + " 2>&1";
  FILE* p = ::popen(full.c_str(), "r");
  if (!p) return -1;
  char buf[4096];
  size_t n;
  std::string text;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) text.append(buf, n);
  int status = ::pclose(p);
  if (out) *out = text;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

inline std::string tool_path(const std::string& name) {
  return (std::filesystem::path(SHARDKIT_BINARY_DIR) / "tools" / name).string();
}

}  // namespace shardkit::testing
