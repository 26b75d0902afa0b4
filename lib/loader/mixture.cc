#include "loader/mixture.h"

#include <cmath>
#include <numeric>

#include "core/error.h"

namespace shardkit::loader {

namespace {

[[noreturn]] void refuse(const MixtureSource& s, size_t i, const std::string& why) {
  throw Error(ErrorCode::kInvalidArgument, s.path,
              "mixture source " + std::to_string(i) + ": " + why);
}

}  // namespace

MixtureStream::MixtureStream(const std::vector<MixtureSource>& sources,
                             const std::vector<uint64_t>& sizes, uint64_t max_samples)
    : sizes_(sizes) {
  if (sources.empty() || sources.size() != sizes.size())
    throw Error(ErrorCode::kInvalidArgument, "", "a loader needs at least one source");
  size_t weighted = 0;
  for (size_t i = 0; i < sources.size(); ++i) {
    const MixtureSource& s = sources[i];
    if (int(s.weight.has_value()) + int(s.repeat.has_value()) + int(s.choose.has_value()) > 1)
      refuse(s, i, "give at most one of weight, repeat and choose");
    for (auto [value, name] : {std::pair{s.weight, "weight"}, std::pair{s.repeat, "repeat"}})
      if (value && (!std::isfinite(*value) || *value < 0))
        refuse(s, i,
               std::string(name) + " is " + std::to_string(*value) +
                   ": it must be finite and not negative");
    if (s.weight) {
      ++weighted;
      if (*s.weight > 0 && sizes[i] == 0) refuse(s, i, "has a weight but no records");
    }
  }
  if (weighted != 0 && weighted != sources.size())
    throw Error(ErrorCode::kInvalidArgument, "",
                "mixture: " + std::to_string(weighted) + " of " + std::to_string(sources.size()) +
                    " sources give a weight; weights are relative, so give one for every source "
                    "or use repeat/choose");
  if (weighted) {
    size_ = max_samples ? max_samples : std::accumulate(sizes.begin(), sizes.end(), uint64_t{0});
    std::vector<double> weights;
    for (const MixtureSource& s : sources) weights.push_back(*s.weight);
    const MixtureSchedule schedule(weights);  // refuses weights that are all zero
    // One source needs no schedule: position k is its sample k.
    if (sources.size() > 1) schedule_ = schedule;
    return;
  }
  std::vector<uint64_t> chosen;
  for (size_t i = 0; i < sources.size(); ++i) {
    const MixtureSource& s = sources[i];
    chosen.push_back(s.choose   ? *s.choose
                     : s.repeat ? static_cast<uint64_t>(std::llround(*s.repeat * double(sizes[i])))
                                : sizes[i]);
    if (chosen.back() > 0 && sizes[i] == 0) refuse(s, i, "has no records to choose from");
  }
  size_ = std::accumulate(chosen.begin(), chosen.end(), uint64_t{0});
  if (max_samples) size_ = std::min(size_, max_samples);
  if (sources.size() > 1 && size_ > 0) schedule_ = MixtureSchedule::exact(chosen);
}

MixtureSchedule MixtureStream::at(uint64_t position) const {
  MixtureSchedule s = *schedule_;
  const size_t n = sizes_.size();
  const uint64_t stop = position / kStride;
  std::lock_guard lock(mu_);
  if (checkpoints_.empty()) checkpoints_.assign(n, 0);
  uint64_t have = checkpoints_.size() / n - 1;
  if (have < stop) {
    s.resume(have * kStride, std::vector<uint64_t>(checkpoints_.end() - static_cast<ptrdiff_t>(n),
                                                   checkpoints_.end()));
    checkpoints_.reserve((stop + 1) * n);
    while (have < stop) {
      for (uint64_t k = 0; k < kStride; ++k) s.next();
      checkpoints_.insert(checkpoints_.end(), s.counts().begin(), s.counts().end());
      ++have;
    }
  } else {
    s.resume(stop * kStride,
             std::vector<uint64_t>(checkpoints_.begin() + static_cast<ptrdiff_t>(stop * n),
                                   checkpoints_.begin() + static_cast<ptrdiff_t>((stop + 1) * n)));
  }
  return s;
}

void MixtureStream::locate(uint64_t first, uint64_t count, uint32_t* source,
                           uint64_t* sample) const {
  if (!schedule_) {
    for (uint64_t j = 0; j < count; ++j) {
      source[j] = 0;
      sample[j] = first + j;
    }
    return;
  }
  MixtureSchedule s = at(first);
  while (s.position() < first) s.next();
  for (uint64_t j = 0; j < count; ++j) {
    source[j] = s.next();
    sample[j] = s.counts()[source[j]] - 1;
  }
}

uint64_t MixtureStream::samples_bound(size_t source) const {
  if (!schedule_) return size_;
  // Every prefix's count c is within one sample of its share x (|c - x| < 1), so c <= ceil(x).
  const unsigned __int128 share =
      static_cast<unsigned __int128>(schedule_->shares()[source]) * size_;
  const uint64_t den = schedule_->denominator();
  return std::min<uint64_t>(size_, static_cast<uint64_t>((share + den - 1) / den));
}

std::vector<uint64_t> MixtureStream::counts_before(uint64_t position, Cursor* cursor) const {
  if (!schedule_) return {position};
  Cursor local;
  Cursor& c = cursor ? *cursor : local;
  if (!c || c->position() > position || position - c->position() > kStride) c = at(position);
  while (c->position() < position) c->next();
  return c->counts();
}

}  // namespace shardkit::loader
