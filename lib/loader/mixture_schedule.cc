#include "loader/mixture_schedule.h"

#include <stdexcept>
#include <string>

#include "core/error.h"

namespace shardkit::loader {

MixtureSchedule::MixtureSchedule(const std::vector<double>& weights)
    : shares_(fixed_point_shares(weights)) {
  counts_.assign(shares_.size(), 0);
}

MixtureSchedule MixtureSchedule::exact(const std::vector<uint64_t>& counts) {
  unsigned __int128 total = 0;
  for (uint64_t c : counts) total += c;
  if (total == 0 || total >= (unsigned __int128){1} << 63)
    throw Error(ErrorCode::kInvalidArgument, "",
                "a mixture needs between 1 and 2^63 - 1 samples per epoch");
  MixtureSchedule s(std::vector<double>{1.0});  // then given the exact shares
  s.shares_ = counts;
  s.denominator_ = static_cast<uint64_t>(total);
  s.counts_.assign(counts.size(), 0);
  return s;
}

MixtureSchedule MixtureSchedule::following(std::shared_ptr<const WeightCurve> curve) {
  MixtureSchedule s(std::vector<double>{1.0});  // then given the curve
  s.shares_.clear();
  s.counts_.assign(curve->sources(), 0);
  s.curve_ = std::move(curve);
  return s;
}

uint64_t MixtureSchedule::most(size_t source, uint64_t samples) const {
  if (curve_) return std::min(samples, curve_->ceil_integral(source, samples));
  // Every prefix's count c is within one sample of its share x (|c - x| < 1), so c <= ceil(x).
  const unsigned __int128 share = static_cast<unsigned __int128>(shares_[source]) * samples;
  return std::min<uint64_t>(samples,
                            static_cast<uint64_t>((share + denominator_ - 1) / denominator_));
}

double MixtureSchedule::integral(size_t source, uint64_t samples) const {
  if (curve_) return curve_->integral(source, samples);
  return static_cast<double>(shares_[source]) / static_cast<double>(denominator_) *
         static_cast<double>(samples);
}

uint32_t MixtureSchedule::next() { return curve_ ? next_on_curve() : next_greedy(); }

uint32_t MixtureSchedule::next_greedy() {
  // error_i = share_i x (k + 1) - count_i x denominator, in units of 1/denominator samples;
  // 128 bits hold it (shares and counts stay below 2^64, k + 1 below 2^64, and below 2^63 for
  // exact schedules whose shares reach 2^63).
  const unsigned __int128 k1 = position_ + 1;
  uint32_t best = 0;
  __int128 best_error = 0;
  for (size_t i = 0; i < shares_.size(); ++i) {
    const __int128 error =
        static_cast<__int128>(shares_[i] * k1) -
        static_cast<__int128>(static_cast<unsigned __int128>(counts_[i]) * denominator_);
    if (i == 0 || error > best_error) {
      best = static_cast<uint32_t>(i);
      best_error = error;
    }
  }
  ++counts_[best];
  ++position_;
  return best;
}

uint64_t MixtureSchedule::deadline(size_t i) const {
  // The last sample k with J_i(k) < count + 1.
  const unsigned __int128 due = (static_cast<unsigned __int128>(counts_[i]) + 1) * kOne;
  const uint64_t x = curve_->first_reaching(i, due, false);
  return x == WeightCurve::kNever ? UINT64_MAX : x - 1;
}

uint32_t MixtureSchedule::next_on_curve() {
  const size_t n = counts_.size();
  if (!walk_ || walk_->position() != position_) {
    walk_.emplace(*curve_, position_);
    deadline_.clear();
  }
  // excess_i > 0: source i is behind its integral after this sample (released).
  size_t best = n;
  __int128 best_excess = 0;
  for (size_t i = 0; i < n; ++i) {
    const __int128 e = walk_->excess(i, static_cast<unsigned __int128>(counts_[i]) * kOne);
    if (n <= 3) {
      if (best == n || e > best_excess) best = i, best_excess = e;
      continue;
    }
    if (e <= 0) continue;
    if (deadline_.empty())
      for (size_t j = 0; j < n; ++j) deadline_.push_back(deadline(j));
    if (best == n || deadline_[i] < deadline_[best]) best = i;
  }
  // The sources' excesses sum to one sample, so one is always positive.
  if (best == n) throw std::logic_error("mixture schedule: no source released");
  ++counts_[best];
  ++position_;
  walk_->advance();
  if (!deadline_.empty()) deadline_[best] = deadline(best);
  return static_cast<uint32_t>(best);
}

void MixtureSchedule::resume(uint64_t position, const std::vector<uint64_t>& counts) {
  counts_ = counts;
  position_ = position;
  walk_.reset();
}

void MixtureSchedule::seek(uint64_t samples) {
  resume(0, std::vector<uint64_t>(counts_.size(), 0));
  while (position_ < samples) next();
}

}  // namespace shardkit::loader
