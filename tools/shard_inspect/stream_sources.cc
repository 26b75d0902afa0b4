#include "shard_inspect/stream_sources.h"
#include "shard_inspect/source_flags.h"

#include "core/dataset_store.h"
#include "core/error.h"
#include "core/manifest.h"
#include "loader/mixture_spec.h"
#include "loader/plan.h"

namespace shard_inspect {

namespace loader = shardkit::loader;

StreamSources load_stream_sources(const std::string& dir, const std::string& mixture,
                                  loader::LoaderOptions& options, bool seed_given) {
  if (dir.empty() && mixture.empty())
    throw shardkit::Error(shardkit::ErrorCode::kInvalidArgument, "",
                          "no data: give a dataset DIR or --mixture SPEC.json");
  if (!dir.empty() && !mixture.empty())
    throw shardkit::Error(shardkit::ErrorCode::kInvalidArgument, "",
                          "give a dataset DIR or --mixture SPEC.json, not both");
  StreamSources s;
  s.sources = {loader::MixtureSource{dir}};
  if (!mixture.empty()) {
    const loader::MixtureSpec spec = loader::read_mixture_spec(mixture);
    s.sources = spec.sources;
    s.mixed = true;
    if (spec.seed && !seed_given) options.seed = *spec.seed;
    if (spec.max_samples && !options.max_samples) options.max_samples = *spec.max_samples;
  }
  for (const loader::MixtureSource& source : s.sources) {
    s.manifests.push_back(shardkit::open_store(source.path, source_options())->load_manifest());
    const shardkit::Manifest& m = s.manifests.back();
    s.shapes.push_back({shardkit::Geometry::of(m), m.schema.record_size()});
    s.sizes.push_back(s.shapes.back().geometry.records());
  }
  const shardkit::Manifest& first = s.manifests.front();
  s.stream = std::make_shared<const loader::MixtureStream>(
      s.sources, s.sizes, options.max_samples, loader::row_tokens(first.schema, first.info));
  return s;
}

}  // namespace shard_inspect
