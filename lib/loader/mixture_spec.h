// A mixture written down: the JSON file `shard-inspect order --mixture` and
// `shardkit.read_mixture` read.
//
//   {"seed": 7, "max_samples": 100000,
//    "sources": [{"path": "data/web", "weight": 0.7}, {"path": "s3://bucket/code", "weight": 0.3}]}
//
// Each source has "path" and at most one of "weight", "repeat", "choose" (mixture.h); "seed"
// and "max_samples" are optional. A relative path is relative to the file's directory. Weights
// may instead change over the epoch, for every source at once:
//
//   {"sources": [{"path": "web"}, {"path": "code"}],
//    "schedule": [{"at_tokens": 0, "weights": [0.9, 0.1]}, {"at_tokens": 2e9, "weights": [0.5,
//    0.5]}], "interpolation": "linear", "tokens_per_sample": 2048}
//
// Each point gives "at_samples" or "at_tokens" (one axis for all, the first at 0) and one weight
// per source; "interpolation" is "step" (default: each point's weights hold until the next) or
// "linear"; "tokens_per_sample" as WeightSchedule says. Unknown keys are refused, so a misspelt
// "wieght" cannot silently mean repeat 1, and so is a key given twice in one object.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "loader/mixture.h"

namespace shardkit::loader {

struct MixtureSpec {
  std::vector<MixtureSource> sources;  // a "schedule" is copied into each source's
  std::optional<uint64_t> seed;
  std::optional<uint64_t> max_samples;
};

// Throws Error(kInput, file) naming the key or source at fault.
MixtureSpec read_mixture_spec(const std::filesystem::path& file);
MixtureSpec parse_mixture_spec(const std::string& json, const std::string& file,
                               const std::filesystem::path& base_dir);

}  // namespace shardkit::loader
