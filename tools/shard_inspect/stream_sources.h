// The datasets behind the stream that `shard-inspect order` prints and `shard-inspect report`
// charts: one dataset, or the sources of a mixture spec, with what the loader's plan needs of
// each (their manifests are read; no record is).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/manifest.h"
#include "loader/loader_options.h"
#include "loader/mixture.h"
#include "loader/plan.h"

namespace shard_inspect {

struct StreamSources {
  std::vector<shardkit::loader::MixtureSource> sources;
  std::vector<shardkit::Manifest> manifests;
  std::vector<uint64_t> sizes;  // records per source
  std::vector<shardkit::loader::SourceShape> shapes;
  bool mixed = false;  // from a spec: rows name their source
  // The epoch's stream as the loader builds it (max_samples, the first source's row tokens).
  std::shared_ptr<const shardkit::loader::MixtureStream> stream;
};

// Exactly one of `dir` and `mixture` (a spec file). The spec's seed and max_samples fill in
// `options` where the command line left them unset (`seed_given`: --seed was given).
StreamSources load_stream_sources(const std::string& dir, const std::string& mixture,
                                  shardkit::loader::LoaderOptions& options, bool seed_given);

}  // namespace shard_inspect
