// A tiny --key value parser and dataset-metadata lookups shared by the C++ examples, so each
// example file is about training, not plumbing.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>

#include "core/dataset.h"

namespace examples {

class Args {
 public:
  Args(int argc, char** argv) {
    for (int i = 1; i < argc; ++i) {
      std::string key = argv[i];
      if (key.rfind("--", 0) != 0) throw std::runtime_error("unexpected argument: " + key);
      key = key.substr(2);
      if (i + 1 < argc && std::string(argv[i + 1]).rfind("--", 0) != 0)
        values_[key] = argv[++i];
      else
        values_[key] = "1";
    }
  }
  bool has(const std::string& k) const { return values_.count(k) > 0; }
  std::string str(const std::string& k, const std::string& fallback = "") const {
    auto it = values_.find(k);
    return it == values_.end() ? fallback : it->second;
  }
  int64_t num(const std::string& k, int64_t fallback) const {
    return has(k) ? std::stoll(str(k)) : fallback;
  }
  double real(const std::string& k, double fallback) const {
    return has(k) ? std::stod(str(k)) : fallback;
  }

 private:
  std::map<std::string, std::string> values_;
};

// A number stored under `key` in the manifest metadata, at top level or one object deep
// (e.g. "vocab_size" or {"tokenizer": {"vocab_size": ...}}); shardify records such facts.
inline std::optional<int64_t> metadata_number(const shardkit::Dataset& ds, const std::string& key) {
  for (const auto& [top, raw] : ds.manifest().metadata) {
    std::string text = top == key ? raw : "";
    if (text.empty()) {
      const auto at = raw.find("\"" + key + "\"");
      if (at == std::string::npos) continue;
      const auto colon = raw.find(':', at);
      if (colon == std::string::npos) continue;
      text = raw.substr(colon + 1);
    }
    const char* p = text.c_str();
    while (*p == ' ') ++p;
    char* end = nullptr;
    const long long v = std::strtoll(p, &end, 10);
    if (end != p) return v;
  }
  return std::nullopt;
}

// How many labels the manifest lists: shardify stores {"names": [...], ...} under "labels";
// a bare JSON array is accepted too.
inline std::optional<int64_t> metadata_label_count(const shardkit::Dataset& ds) {
  const auto raw = ds.metadata("labels");
  if (!raw) return std::nullopt;
  size_t open =
      raw->find('[', raw->find("\"names\"") == std::string::npos ? 0 : raw->find("\"names\""));
  if (open == std::string::npos) return std::nullopt;
  int64_t count = 0;
  bool in_string = false, any = false;
  for (size_t i = open + 1; i < raw->size(); ++i) {
    const char c = (*raw)[i];
    if (in_string) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        in_string = false;
      continue;
    }
    if (c == '"')
      in_string = any = true;
    else if (c == ',')
      ++count;
    else if (c == ']')
      break;
    else if (c != ' ')
      any = true;
  }
  return any ? count + 1 : 0;
}

}  // namespace examples
