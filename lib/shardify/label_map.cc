#include "shardify/label_map.h"

#include <algorithm>
#include <string_view>

#include "core/error.h"
#include "core/utf8.h"

namespace shardkit::shardify {
namespace {

// A decimal integer of any length: an optional '-' and digits.
bool is_decimal(const std::string& s) {
  const size_t i = (!s.empty() && s[0] == '-') ? 1 : 0;
  return i < s.size() && s.find_first_not_of("0123456789", i) == std::string::npos;
}

// A decimal integer's sign and digits without leading zeros ("-0" is 0, not negative).
struct Decimal {
  bool negative;
  std::string_view digits;
};
Decimal decimal_parts(std::string_view s) {
  const bool minus = s[0] == '-';
  s.remove_prefix(minus ? 1 : 0);
  s.remove_prefix(std::min(s.find_first_not_of('0'), s.size()));
  return {minus && !s.empty(), s};
}

// Numeric order with no bound on the length: by sign, then the magnitude's number of digits,
// then its digits.
bool numerically_less(const std::string& a, const std::string& b) {
  const Decimal x = decimal_parts(a), y = decimal_parts(b);
  if (x.negative != y.negative) return x.negative;
  const auto magnitude_less = [](std::string_view p, std::string_view q) {
    return p.size() != q.size() ? p.size() < q.size() : p < q;
  };
  return x.negative ? magnitude_less(y.digits, x.digits) : magnitude_less(x.digits, y.digits);
}

}  // namespace

LabelMap LabelMap::from_list(const std::vector<std::string>& names) {
  LabelMap m;
  m.order_ = "given";
  m.names_ = names;
  for (const std::string& name : names) {
    if (name.empty())
      throw Error(ErrorCode::kInvalidArgument, "", "--labels has an empty label name");
    // The names go into the manifest, which is JSON: UTF-8 only.
    if (first_invalid_utf8(name))
      throw Error(ErrorCode::kInvalidArgument, "",
                  "--labels: the label '" + escape_invalid_utf8(name) +
                      "' is not UTF-8, and the dataset records its labels as UTF-8 text");
  }
  m.build_index();
  if (m.index_.size() != m.names_.size())
    throw Error(ErrorCode::kInvalidArgument, "", "--labels names a label twice");
  return m;
}

LabelMap LabelMap::from_observed(const std::set<std::string>& labels) {
  LabelMap m;
  m.names_.assign(labels.begin(), labels.end());  // std::set: byte-wise order
  if (!m.names_.empty() && std::all_of(m.names_.begin(), m.names_.end(), is_decimal)) {
    m.order_ = "numeric";
    std::stable_sort(m.names_.begin(), m.names_.end(), numerically_less);
  } else {
    m.order_ = "lexicographic";
  }
  m.build_index();
  return m;
}

void LabelMap::build_index() {
  index_.clear();
  for (size_t i = 0; i < names_.size(); ++i) index_.emplace(names_[i], static_cast<int32_t>(i));
}

std::optional<int32_t> LabelMap::index(const std::string& label) const {
  auto it = index_.find(label);
  if (it == index_.end()) return std::nullopt;
  return it->second;
}

}  // namespace shardkit::shardify
