// String labels to class indices. With --labels the order is the one given. Otherwise it is
// derived from every label in the inputs (all parts, so that parts agree): numeric order when
// every label is a decimal integer ("0","1","2" map to 0,1,2 and "2","10" stay in that order),
// byte-wise lexicographic order otherwise.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

namespace shardkit::shardify {

class LabelMap {
 public:
  LabelMap() = default;
  // "a,b,c"; throws Error(kInvalidArgument) for empty or repeated names.
  static LabelMap from_list(const std::vector<std::string>& names);
  static LabelMap from_observed(const std::set<std::string>& labels);

  std::optional<int32_t> index(const std::string& label) const;
  const std::vector<std::string>& names() const { return names_; }
  const std::string& order() const { return order_; }  // "given", "numeric", "lexicographic"

 private:
  void build_index();
  std::vector<std::string> names_;
  std::string order_;
  std::unordered_map<std::string, int32_t> index_;
};

}  // namespace shardkit::shardify
