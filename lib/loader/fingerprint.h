// Which stream a LoaderState is a position in, so that restore() can refuse a state saved over
// other data or with another order instead of continuing somewhere else silently.
//
// "DDDDDDDDDDDDDDDD-OOOOOOOOOOOOOOOO[-nodesC]": XXH3 of the data (each source's record layout,
// records per block, and its shards' names, record counts and checksums, in order; not where the
// dataset lives, so a copy or its URL is the same data) and XXH3 of what orders it (shuffle, each
// source's window in blocks, the mixture's weights (constant ones as the fixed-point shares the
// sampler draws by, so that weights equal in effect match), repeat, choose or schedule, and the
// plan: partition='nodes' and its partitions, also named by the suffix so that a refusal can say
// so; the rows plan adds nothing, so states saved before there were plans still match). The seed is
// checked on its own (the state holds it); max_samples, max_tokens, drop_last, world size and
// batch size only cut the epoch or its steps, so a run may resume with others.
#pragma once

#include <string>
#include <vector>

#include "core/manifest.h"
#include "loader/loader_options.h"
#include "loader/mixture.h"

namespace shardkit::loader {

// The fingerprints of a stream: the one a state saved now carries, and the one a state saved
// before constant weights entered as shares carries for it (the weights hashed as written; ""
// when the sources have no constant weights), which restore() accepts too.
struct StreamFingerprints {
  std::string current;
  std::string written_weights;
};
StreamFingerprints stream_fingerprints(const std::vector<const Manifest*>& manifests,
                                       const std::vector<MixtureSource>& sources,
                                       const LoaderOptions& options);

// "" for the rows plan, "-nodes64" for partition='nodes' over 64 partitions.
std::string plan_suffix(const LoaderOptions& options);

// Throws Error(kInvalidArgument) when a state with `saved_fingerprint` and `saved_seed` cannot
// continue the stream of (`fingerprints`, `seed`), naming both and which part differs. `what`
// names this loader's data. An empty saved fingerprint (a state saved before fingerprints were
// recorded, so under the rows plan) is accepted by a rows loader.
void check_resumable(const std::string& saved_fingerprint, uint64_t saved_seed,
                     const StreamFingerprints& fingerprints, uint64_t seed,
                     const std::string& what);

}  // namespace shardkit::loader
