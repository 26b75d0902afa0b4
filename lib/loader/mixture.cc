#include "loader/mixture.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/error.h"

namespace shardkit::loader {

namespace {

[[noreturn]] void refuse(const MixtureSource& s, size_t i, const std::string& why) {
  throw Error(ErrorCode::kInvalidArgument, s.path,
              "mixture source " + std::to_string(i) + ": " + why);
}

[[noreturn]] void refuse_all(const std::string& why) {
  throw Error(ErrorCode::kInvalidArgument, "", "mixture: " + why);
}

// One source's schedule on the sample axis: (sample, weight), a later point at the same sample
// replacing an earlier one.
std::vector<std::pair<uint64_t, double>> in_samples(const WeightSchedule& w, uint64_t tps) {
  std::vector<std::pair<uint64_t, double>> out;
  for (const WeightPoint& p : w.points) {
    const uint64_t at = w.axis == ScheduleAxis::kTokens ? p.at / tps + (p.at % tps != 0) : p.at;
    if (!out.empty() && out.back().first == at)
      out.back().second = p.weight;
    else
      out.emplace_back(at, p.weight);
  }
  return out;
}

// A source's weight at sample x of its own schedule.
double weight_at(const std::vector<std::pair<uint64_t, double>>& points, bool linear, uint64_t x) {
  auto it = std::upper_bound(points.begin(), points.end(), x,
                             [](uint64_t v, const auto& p) { return v < p.first; });
  const auto& [at, w] = *std::prev(it);
  if (!linear || it == points.end()) return w;
  const double t = static_cast<double>(x - at) / static_cast<double>(it->first - at);
  return w + (it->second - w) * t;
}

void check_schedule(const MixtureSource& s, size_t i, const WeightSchedule& first) {
  const WeightSchedule& w = *s.schedule;
  if (w.axis != first.axis || w.linear != first.linear ||
      w.tokens_per_sample != first.tokens_per_sample)
    refuse(s, i,
           "its schedule's axis, interpolation or tokens_per_sample differs from source 0's; "
           "a mixture has one schedule");
  if (w.points.empty() || w.points[0].at != 0) refuse(s, i, "a schedule starts with a point at 0");
  for (size_t p = 0; p < w.points.size(); ++p) {
    if (p > 0 && w.points[p].at <= w.points[p - 1].at)
      refuse(s, i, "schedule points must be in increasing order of \"at\"");
    if (!std::isfinite(w.points[p].weight) || w.points[p].weight < 0)
      refuse(s, i,
             "schedule point " + std::to_string(p) + " has weight " +
                 std::to_string(w.points[p].weight) + ": it must be finite and not negative");
  }
}

}  // namespace

MixtureStream::MixtureStream(const std::vector<MixtureSource>& sources,
                             const std::vector<uint64_t>& sizes, uint64_t max_samples,
                             uint64_t row_tokens)
    : sizes_(sizes) {
  if (sources.empty() || sources.size() != sizes.size())
    throw Error(ErrorCode::kInvalidArgument, "", "a loader needs at least one source");
  size_t weighted = 0, scheduled = 0;
  for (size_t i = 0; i < sources.size(); ++i) {
    const MixtureSource& s = sources[i];
    if (int(s.weight.has_value()) + int(s.repeat.has_value()) + int(s.choose.has_value()) +
            int(s.schedule.has_value()) >
        1)
      refuse(s, i, "give at most one of weight, schedule, repeat and choose");
    for (auto [value, name] : {std::pair{s.weight, "weight"}, std::pair{s.repeat, "repeat"}})
      if (value && (!std::isfinite(*value) || *value < 0))
        refuse(s, i,
               std::string(name) + " is " + std::to_string(*value) +
                   ": it must be finite and not negative");
    if (s.weight) {
      ++weighted;
      if (*s.weight > 0 && sizes[i] == 0) refuse(s, i, "has a weight but no records");
    }
    if (s.schedule) {
      ++scheduled;
      check_schedule(s, i, sources[0].schedule ? *sources[0].schedule : *s.schedule);
    }
  }
  if (weighted != 0 && weighted != sources.size())
    refuse_all(std::to_string(weighted) + " of " + std::to_string(sources.size()) +
               " sources give a weight; weights are relative, so give one for every source "
               "or use repeat/choose");
  if (scheduled != 0 && scheduled != sources.size())
    refuse_all(std::to_string(scheduled) + " of " + std::to_string(sources.size()) +
               " sources give a schedule; give one for every source");
  if (weighted)
    init_weighted(sources, max_samples);
  else if (scheduled)
    init_scheduled(sources, max_samples, row_tokens);
  else
    init_counted(sources, max_samples);
}

void MixtureStream::init_weighted(const std::vector<MixtureSource>& sources, uint64_t max_samples) {
  size_ = max_samples ? max_samples : std::accumulate(sizes_.begin(), sizes_.end(), uint64_t{0});
  std::vector<double> weights;
  for (const MixtureSource& s : sources) weights.push_back(*s.weight);
  const MixtureSchedule schedule(weights);  // refuses weights that are all zero
  // One source needs no schedule: position k is its sample k.
  if (sources.size() > 1) schedule_ = schedule;
}

void MixtureStream::init_scheduled(const std::vector<MixtureSource>& sources, uint64_t max_samples,
                                   uint64_t row_tokens) {
  size_ = max_samples ? max_samples : std::accumulate(sizes_.begin(), sizes_.end(), uint64_t{0});
  if (size_ >= WeightCurve::kMaxSamples)
    refuse_all("a scheduled epoch holds fewer than 2^40 samples, not " + std::to_string(size_));
  const WeightSchedule& first = *sources[0].schedule;
  const uint64_t tps = first.tokens_per_sample ? first.tokens_per_sample : row_tokens;
  if (first.axis == ScheduleAxis::kTokens && tps == 0)
    refuse_all(
        "a schedule in tokens needs tokens_per_sample (the first source has no token ids "
        "field to take it from)");
  std::vector<std::vector<std::pair<uint64_t, double>>> own;
  std::vector<uint64_t> at;
  for (const MixtureSource& s : sources) {
    own.push_back(in_samples(*s.schedule, tps));
    for (const auto& p : own.back()) at.push_back(p.first);
  }
  std::sort(at.begin(), at.end());
  at.erase(std::unique(at.begin(), at.end()), at.end());
  if (at.back() >= WeightCurve::kMaxSamples)
    refuse_all("a schedule point lies past 2^40 samples (sample " + std::to_string(at.back()) +
               ")");
  std::vector<WeightCurve::Point> points;
  for (uint64_t x : at) {
    std::vector<double> w;
    for (const auto& o : own) w.push_back(weight_at(o, first.linear, x));
    points.push_back({x, fixed_point_shares(w, "mixture schedule at sample " + std::to_string(x))});
    for (size_t i = 0; i < sources.size(); ++i)
      if (points.back().shares[i] > 0 && sizes_[i] == 0)
        refuse(sources[i], i, "has a scheduled weight but no records");
  }
  schedule_ = MixtureSchedule::following(
      std::make_shared<const WeightCurve>(std::move(points), first.linear));
}

void MixtureStream::init_counted(const std::vector<MixtureSource>& sources, uint64_t max_samples) {
  std::vector<uint64_t> chosen;
  for (size_t i = 0; i < sources.size(); ++i) {
    const MixtureSource& s = sources[i];
    chosen.push_back(s.choose   ? *s.choose
                     : s.repeat ? static_cast<uint64_t>(std::llround(*s.repeat * double(sizes_[i])))
                                : sizes_[i]);
    if (chosen.back() > 0 && sizes_[i] == 0) refuse(s, i, "has no records to choose from");
  }
  size_ = std::accumulate(chosen.begin(), chosen.end(), uint64_t{0});
  // Else every epoch would be empty, and reading it would blame the batch size.
  if (size_ == 0 && std::any_of(sources.begin(), sources.end(),
                                [](const MixtureSource& s) { return s.repeat || s.choose; }))
    refuse_all(
        "no source gives a sample per epoch (each one's choose is 0, or its repeat x its records "
        "rounds to 0): give some source a repeat or choose that selects at least one sample");
  if (max_samples) size_ = std::min(size_, max_samples);
  if (sources.size() > 1 && size_ > 0) schedule_ = MixtureSchedule::exact(chosen);
}

std::shared_ptr<const MixtureStream::Chunk> MixtureStream::compute_chunk_locked(
    uint64_t index) const {
  const size_t n = sizes_.size();
  MixtureSchedule s = *schedule_;
  s.resume(index * kStride,
           std::vector<uint64_t>(checkpoints_.begin() + static_cast<ptrdiff_t>(index * n),
                                 checkpoints_.begin() + static_cast<ptrdiff_t>((index + 1) * n)));
  auto c = std::make_shared<Chunk>();
  c->index = index;
  c->source.resize(kStride);
  c->marks.reserve(kStride / kMark * n);
  for (uint64_t k = 0; k < kStride; ++k) {
    if (k % kMark == 0) c->marks.insert(c->marks.end(), s.counts().begin(), s.counts().end());
    c->source[k] = s.next();
  }
  if (checkpoints_.size() == (index + 1) * n)
    checkpoints_.insert(checkpoints_.end(), s.counts().begin(), s.counts().end());
  chunks_[index] = {c, ++uses_};
  if (chunks_.size() > kChunksKept) {
    auto oldest = chunks_.begin();
    for (auto it = chunks_.begin(); it != chunks_.end(); ++it)
      if (it->second.second < oldest->second.second) oldest = it;
    chunks_.erase(oldest);
  }
  return c;
}

std::shared_ptr<const MixtureStream::Chunk> MixtureStream::chunk(uint64_t index) const {
  std::lock_guard lock(mu_);
  if (auto it = chunks_.find(index); it != chunks_.end()) {
    it->second.second = ++uses_;
    return it->second.first;
  }
  const size_t n = sizes_.size();
  if (checkpoints_.empty()) checkpoints_.assign(n, 0);
  // Counts before a chunk come from replaying the ones before it, once.
  while (checkpoints_.size() / n <= index) compute_chunk_locked(checkpoints_.size() / n - 1);
  if (auto it = chunks_.find(index); it != chunks_.end()) return it->second.first;
  return compute_chunk_locked(index);
}

std::vector<uint64_t> MixtureStream::counts_before(uint64_t position, Cursor* cursor) const {
  if (!schedule_) return {position};
  const uint64_t index = position / kStride;
  Cursor local;
  Cursor& c = cursor ? *cursor : local;
  if (!c || c->index != index) c = chunk(index);
  const size_t n = sizes_.size();
  const uint64_t at = position % kStride, mark = at / kMark;
  std::vector<uint64_t> counts(c->marks.begin() + static_cast<ptrdiff_t>(mark * n),
                               c->marks.begin() + static_cast<ptrdiff_t>((mark + 1) * n));
  for (uint64_t k = mark * kMark; k < at; ++k) ++counts[c->source[k]];
  return counts;
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
  Cursor c;
  std::vector<uint64_t> counts = counts_before(first, &c);
  for (uint64_t j = 0; j < count; ++j) {
    const uint64_t p = first + j;
    if (c->index != p / kStride) c = chunk(p / kStride);
    const uint32_t s = c->source[p % kStride];
    source[j] = s;
    sample[j] = counts[s]++;
  }
}

uint64_t MixtureStream::samples_bound(size_t source) const {
  return schedule_ ? schedule_->most(source, size_) : size_;
}

}  // namespace shardkit::loader
