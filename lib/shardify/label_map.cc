#include "shardify/label_map.h"

#include <algorithm>

#include "core/error.h"

namespace shardkit::shardify {
namespace {

bool is_decimal(const std::string& s) {
  size_t i = (!s.empty() && s[0] == '-') ? 1 : 0;
  if (i == s.size() || s.size() - i > 18) return false;
  for (; i < s.size(); ++i)
    if (s[i] < '0' || s[i] > '9') return false;
  return true;
}

}  // namespace

LabelMap LabelMap::from_list(const std::vector<std::string>& names) {
  LabelMap m;
  m.order_ = "given";
  m.names_ = names;
  for (const std::string& name : names)
    if (name.empty())
      throw Error(ErrorCode::kInvalidArgument, "", "--labels has an empty label name");
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
    std::stable_sort(
        m.names_.begin(), m.names_.end(),
        [](const std::string& a, const std::string& b) { return std::stoll(a) < std::stoll(b); });
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
