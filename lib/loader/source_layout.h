// Whether two datasets can be mixed in one loader, and how a row of the second is read as a
// row of the first. The first source's schema and DatasetInfo define the batch (Collator); every
// other source must hold the fields the batch reads, with the same dtype, shape and role, and
// must agree on what the ids mean: the same task, tokenizer and label names where both say.
// Field offsets may differ: such rows are copied into the first source's layout.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "core/dataset.h"
#include "loader/loader_options.h"

namespace shardkit::loader {

class RowLayout {
 public:
  // `options` as with_dataset_defaults() resolved them for `first`. Throws
  // Error(kInvalidArgument) naming both datasets and the difference.
  RowLayout(const Dataset& first, const Dataset& other, const LoaderOptions& options);

  bool same() const { return same_; }
  // Copies the fields the batch reads from `row` (other's layout) to `out` (first's layout).
  void repack(const unsigned char* row, unsigned char* out) const;

 private:
  struct Copy {
    size_t from, to, bytes;
  };
  bool same_ = true;
  std::vector<Copy> copies_;
};

}  // namespace shardkit::loader
