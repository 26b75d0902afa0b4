#include "shard_inspect/stream_sources.h"

#include "core/dataset_store.h"
#include "core/error.h"
#include "core/manifest.h"
#include "loader/mixture_spec.h"

namespace shard_inspect {

namespace loader = shardkit::loader;

std::shared_ptr<const loader::MixtureStream> StreamSources::stream(uint64_t max_samples) const {
  return std::make_shared<const loader::MixtureStream>(sources, sizes, max_samples);
}

StreamSources load_stream_sources(const std::string& dir, const std::string& mixture,
                                  loader::LoaderOptions& options, bool seed_given) {
  if (dir.empty() == mixture.empty())
    throw shardkit::Error(shardkit::ErrorCode::kInvalidArgument, "",
                          "give a dataset DIR or --mixture SPEC.json, not both");
  StreamSources s;
  s.sources = {{dir, {}, {}, {}}};
  if (!mixture.empty()) {
    const loader::MixtureSpec spec = loader::read_mixture_spec(mixture);
    s.sources = spec.sources;
    s.mixed = true;
    if (spec.seed && !seed_given) options.seed = *spec.seed;
    if (spec.max_samples && !options.max_samples) options.max_samples = *spec.max_samples;
  }
  for (const loader::MixtureSource& source : s.sources) {
    const shardkit::Manifest m = shardkit::open_store(source.path)->load_manifest();
    s.shapes.push_back({shardkit::Geometry::of(m), m.schema.record_size()});
    s.sizes.push_back(s.shapes.back().geometry.records());
  }
  return s;
}

}  // namespace shard_inspect
