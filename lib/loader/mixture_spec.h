// A mixture written down: the JSON file `shard-inspect order --mixture` and
// `shardkit.Loader(mixture=...)` read.
//
//   {"seed": 7, "max_samples": 100000,
//    "sources": [{"path": "data/web", "weight": 0.7}, {"path": "s3://bucket/code", "weight": 0.3}]}
//
// Each source has "path" and at most one of "weight", "repeat", "choose" (mixture.h); "seed"
// and "max_samples" are optional. A relative path is relative to the file's directory. Unknown
// keys are refused, so a misspelt "wieght" cannot silently mean repeat 1.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "loader/mixture.h"

namespace shardkit::loader {

struct MixtureSpec {
  std::vector<MixtureSource> sources;
  std::optional<uint64_t> seed;
  std::optional<uint64_t> max_samples;
};

// Throws Error(kInput, file) naming the key or source at fault.
MixtureSpec read_mixture_spec(const std::filesystem::path& file);
MixtureSpec parse_mixture_spec(const std::string& json, const std::string& file,
                               const std::filesystem::path& base_dir);

}  // namespace shardkit::loader
