#include "loader/fingerprint.h"

#include <algorithm>
#include <cstring>

#include "core/checksum.h"
#include "core/error.h"
#include "core/geometry.h"
#include "loader/plan.h"
#include "loader/weight_curve.h"

namespace shardkit::loader {

namespace {

// Bytes to hash, each value fixed-width so that no two sequences of fields collide by layout.
class Hasher {
 public:
  void add(uint64_t v) { bytes_.append(reinterpret_cast<const char*>(&v), sizeof v); }
  void add(double v) {
    uint64_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    add(bits);
  }
  void add(const std::string& s) {
    add(uint64_t{s.size()});
    bytes_ += s;
  }
  template <typename T>
  void add(const std::optional<T>& v) {
    add(uint64_t{v.has_value()});
    if (v) add(*v);
  }
  uint64_t digest() const { return xxh3_64(bytes_.data(), bytes_.size()); }

 private:
  std::string bytes_;
};

uint64_t data_hash(const std::vector<const Manifest*>& manifests) {
  Hasher h;
  for (const Manifest* m : manifests) {
    h.add(m->schema.canonical());
    h.add(uint64_t{m->records_per_block});
    h.add(uint64_t{m->shards.size()});
    for (const ShardEntry& s : m->shards) {
      h.add(s.name);
      h.add(s.records);
      h.add(s.checksum);
    }
  }
  return h.digest();
}

// Whether every source has a constant weight, so that the order depends on the weights only
// through their fixed-point shares (MixtureSchedule).
bool constant_weights(const std::vector<MixtureSource>& sources) {
  return !sources.empty() && std::all_of(sources.begin(), sources.end(),
                                         [](const MixtureSource& s) { return s.weight; });
}

// How constant weights enter the hash: as the shares the sampler draws by, so that weights equal
// in effect ([2, 1] and [4, 2]) give one fingerprint; or as written, as states saved before
// shares were hashed recorded them.
enum class Weights { kShares, kAsWritten };

uint64_t order_hash(const std::vector<const Manifest*>& manifests,
                    const std::vector<MixtureSource>& sources, const LoaderOptions& options,
                    Weights weights) {
  Hasher h;
  h.add(uint64_t{options.shuffle});
  // The rows plan adds nothing, so that states saved before the nodes plan existed still match.
  if (options.partition == Partition::kNodes) {
    h.add(std::string("nodes"));
    h.add(uint64_t{options.partitions});
  }
  const size_t budget = options.memory_budget / std::max<size_t>(1, sources.size());
  std::vector<uint64_t> shares;
  if (weights == Weights::kShares && constant_weights(sources)) {
    std::vector<double> written;
    for (const MixtureSource& s : sources) written.push_back(*s.weight);
    shares = fixed_point_shares(written);
  }
  for (size_t i = 0; i < sources.size(); ++i) {
    const Manifest& m = *manifests[i];
    h.add(window_blocks_for(Geometry::of(m), m.schema.record_size(), options, budget));
    const MixtureSource& s = sources[i];
    if (shares.empty()) {
      h.add(s.weight);
    } else {
      h.add(uint64_t{1});  // as an optional that holds a value: the layout stays fixed-width
      h.add(shares[i]);
    }
    h.add(s.repeat);
    h.add(s.choose);
    h.add(uint64_t{s.schedule.has_value()});
    if (!s.schedule) continue;
    h.add(uint64_t{s.schedule->axis == ScheduleAxis::kTokens});
    h.add(uint64_t{s.schedule->linear});
    h.add(s.schedule->tokens_per_sample);
    for (const WeightPoint& p : s.schedule->points) {
      h.add(p.at);
      h.add(p.weight);
    }
  }
  return h.digest();
}

}  // namespace

StreamFingerprints stream_fingerprints(const std::vector<const Manifest*>& manifests,
                                       const std::vector<MixtureSource>& sources,
                                       const LoaderOptions& options) {
  const std::string data = checksum_hex(data_hash(manifests)) + "-";
  auto with_order = [&](Weights weights) {
    return data + checksum_hex(order_hash(manifests, sources, options, weights)) +
           plan_suffix(options);
  };
  return {with_order(Weights::kShares),
          constant_weights(sources) ? with_order(Weights::kAsWritten) : std::string()};
}

std::string plan_suffix(const LoaderOptions& options) {
  if (options.partition == Partition::kRows) return "";
  return "-nodes" + std::to_string(options.partitions);
}

namespace {

// "partition='rows'" or "partition='nodes' over 64 partitions", from a fingerprint's suffix.
std::string plan_words(const std::string& fingerprint) {
  const size_t first = fingerprint.find('-');
  const size_t second = first == std::string::npos ? first : fingerprint.find('-', first + 1);
  if (second == std::string::npos) return "partition='rows'";
  const std::string plan = fingerprint.substr(second + 1);
  if (plan.rfind("nodes", 0) == 0)
    return "partition='nodes' over " + plan.substr(5) + " partitions";
  return "plan '" + plan + "'";
}

}  // namespace

void check_resumable(const std::string& saved, uint64_t saved_seed,
                     const StreamFingerprints& fingerprints, uint64_t seed,
                     const std::string& what) {
  const std::string& fingerprint = fingerprints.current;
  const std::string& written = fingerprints.written_weights;
  const std::string& saved_fingerprint = !written.empty() && saved == written ? fingerprint : saved;
  auto refuse = [&](const std::string& why) {
    throw Error(ErrorCode::kInvalidArgument, what, "cannot resume this state: " + why);
  };
  if (saved_fingerprint.empty()) {
    // Saved before fingerprints were recorded, so before there were plans: a rows state.
    if (plan_words(fingerprint) != plan_words(""))
      refuse(
          "it records no fingerprint, so it was saved by a version that read partition='rows', "
          "and this loader reads " +
          plan_words(fingerprint) + ": resume it with partition='rows'");
    return;
  }
  const auto half = [](const std::string& f, bool data) {
    const size_t dash = f.find('-');
    return dash == std::string::npos ? f : data ? f.substr(0, dash) : f.substr(dash + 1);
  };
  if (half(saved_fingerprint, true) != half(fingerprint, true))
    refuse("it was saved over other data (state fingerprint " + saved_fingerprint +
           ", this loader's " + fingerprint + " over " + what +
           "): a state continues only the stream it was saved from");
  if (plan_words(saved_fingerprint) != plan_words(fingerprint))
    refuse("it was saved with " + plan_words(saved_fingerprint) + " and this loader reads " +
           plan_words(fingerprint) + " (state fingerprint " + saved_fingerprint +
           ", this loader's " + fingerprint +
           "): the plans put the epoch's samples in different orders, so the state continues "
           "only with its own; switch plans at an epoch's start (set_epoch) instead");
  if (saved_fingerprint != fingerprint)
    refuse("it was saved with another order over the same data (state fingerprint " +
           saved_fingerprint + ", this loader's " + fingerprint +
           "): shuffle, window_blocks (which memory_budget sets when window_blocks is 0) or the "
           "mixture's weights, repeat, choose or schedule differ");
  if (saved_seed != seed)
    refuse("it was saved with seed " + std::to_string(saved_seed) + ", this loader has seed " +
           std::to_string(seed) + ": give the loader seed " + std::to_string(saved_seed) +
           " to continue that run");
}

}  // namespace shardkit::loader
