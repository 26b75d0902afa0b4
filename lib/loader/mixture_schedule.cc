#include "loader/mixture_schedule.h"

#include <cmath>
#include <string>

#include "core/error.h"

namespace shardkit::loader {

MixtureSchedule::MixtureSchedule(const std::vector<double>& weights) {
  double total = 0;
  for (size_t i = 0; i < weights.size(); ++i) {
    if (!std::isfinite(weights[i]) || weights[i] < 0)
      throw Error(ErrorCode::kInvalidArgument, "",
                  "mixture weight " + std::to_string(i) + " is " + std::to_string(weights[i]) +
                      ": weights must be finite and not negative");
    total += weights[i];
  }
  if (weights.empty() || !(total > 0))
    throw Error(ErrorCode::kInvalidArgument, "", "a mixture needs a source with a positive weight");
  // Rounded shares; the rounding remainder goes to the largest, so they sum to exactly kOne.
  uint64_t sum = 0;
  size_t largest = 0;
  for (size_t i = 0; i < weights.size(); ++i) {
    shares_.push_back(static_cast<uint64_t>(std::llround(weights[i] / total * double(kOne))));
    sum += shares_.back();
    if (weights[i] > weights[largest]) largest = i;
  }
  shares_[largest] += kOne - sum;  // wraps as intended when sum > kOne
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

uint32_t MixtureSchedule::next() {
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

void MixtureSchedule::resume(uint64_t position, const std::vector<uint64_t>& counts) {
  counts_ = counts;
  position_ = position;
}

void MixtureSchedule::seek(uint64_t samples) {
  counts_.assign(shares_.size(), 0);
  position_ = 0;
  while (position_ < samples) next();
}

}  // namespace shardkit::loader
