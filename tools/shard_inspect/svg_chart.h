// Inline SVG charts for `shard-inspect report`: plain markup, no script, no fonts or styles
// from elsewhere, so the page renders the same offline in any browser.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace shard_inspect::svg {

std::string escape(std::string_view text);  // for HTML text and attribute values

struct Bar {
  std::string label;  // under a column, or left of a horizontal bar
  double value = 0;
  std::string note;     // right of a horizontal bar, or the column's tooltip
  bool marked = false;  // drawn in the accent colour
};

// Vertical columns over a category axis (a histogram). `id` names the <svg> element.
std::string columns(const std::string& id, const std::vector<Bar>& bars,
                    const std::string& y_caption);
// One horizontal bar per row, scaled to the largest value.
std::string bar_rows(const std::string& id, const std::vector<Bar>& bars);
// Columns of stacked shares (each column's values sum to 1), one colour per series, with a
// legend; `x_caption` under the axis.
std::string stacked_shares(const std::string& id, const std::vector<std::vector<double>>& columns,
                           const std::vector<std::string>& series, const std::string& x_caption);

}  // namespace shard_inspect::svg
