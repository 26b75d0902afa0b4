// A file name's extension as readers match it: in lower case, so that DATA.JSONL, notes.TXT.GZ
// and vocab.Json read as their lower-case names do.
#pragma once

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <string>

namespace shardkit {

inline std::string lowercase_extension(const std::filesystem::path& path) {
  std::string extension = path.extension().string();
  std::transform(extension.begin(), extension.end(), extension.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return extension;
}

}  // namespace shardkit
