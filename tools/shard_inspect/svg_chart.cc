#include "shard_inspect/svg_chart.h"

#include <algorithm>
#include <cstdio>

#include "core/progress.h"

namespace shard_inspect::svg {
namespace {

constexpr double kWidth = 760;
constexpr const char* kBase = "#4c78a8";
constexpr const char* kAccent = "#e45756";
constexpr const char* kPalette[] = {"#4c78a8", "#f58518", "#54a24b", "#e45756",
                                    "#72b7b2", "#b279a2", "#eeca3b", "#9d755d"};

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

std::string open_svg(const std::string& id, double height) {
  return "<svg class=\"chart\" id=\"" + escape(id) + "\" xmlns=\"http://www.w3.org/2000/svg\" " +
         "viewBox=\"0 0 " + num(kWidth) + " " + num(height) + "\" width=\"" + num(kWidth) +
         "\" height=\"" + num(height) + "\" role=\"img\">";
}

std::string text(double x, double y, const std::string& s, const char* anchor = "start",
                 const char* extra = "") {
  return "<text x=\"" + num(x) + "\" y=\"" + num(y) + "\" text-anchor=\"" + anchor + "\"" + extra +
         ">" + escape(s) + "</text>";
}

std::string rect(double x, double y, double w, double h, const char* fill,
                 const std::string& title = {}) {
  std::string r = "<rect x=\"" + num(x) + "\" y=\"" + num(y) + "\" width=\"" +
                  num(std::max(0.0, w)) + "\" height=\"" + num(std::max(0.0, h)) + "\" fill=\"" +
                  fill + "\"";
  return title.empty() ? r + "/>" : r + "><title>" + escape(title) + "</title></rect>";
}

}  // namespace

std::string escape(std::string_view s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string columns(const std::string& id, const std::vector<Bar>& bars,
                    const std::string& y_caption) {
  const double height = 240, left = 60, top = 16, plot_h = 170, plot_w = kWidth - left - 10;
  double peak = 0;
  for (const Bar& b : bars) peak = std::max(peak, b.value);
  std::string s = open_svg(id, height);
  s += text(4, 12, y_caption, "start", " class=\"caption\"");
  s += "<line x1=\"" + num(left) + "\" y1=\"" + num(top + plot_h) + "\" x2=\"" +
       num(left + plot_w) + "\" y2=\"" + num(top + plot_h) + "\" stroke=\"#888\"/>";
  s += text(left - 6, top + 8, shardkit::count_text(static_cast<uint64_t>(peak)), "end");
  s += text(left - 6, top + plot_h, "0", "end");
  const double step = bars.empty() ? 0 : plot_w / bars.size();
  // Labels thin out so that they do not overlap: at most about 12 along the axis.
  const size_t label_every = std::max<size_t>(1, (bars.size() + 11) / 12);
  for (size_t i = 0; i < bars.size(); ++i) {
    const Bar& b = bars[i];
    const double h = peak > 0 ? plot_h * b.value / peak : 0;
    const double x = left + i * step;
    s += rect(x + step * 0.1, top + plot_h - h, step * 0.8, h, b.marked ? kAccent : kBase,
              b.label + ": " + b.note);
    if (i % label_every == 0)
      s += text(x + step / 2, top + plot_h + 16, b.label, "middle", " class=\"tick\"");
  }
  return s + "</svg>";
}

std::string bar_rows(const std::string& id, const std::vector<Bar>& bars) {
  const double row = 24, left = 210, right = 170, plot_w = kWidth - left - right;
  double peak = 0;
  for (const Bar& b : bars) peak = std::max(peak, b.value);
  std::string s = open_svg(id, row * bars.size() + 8);
  for (size_t i = 0; i < bars.size(); ++i) {
    const Bar& b = bars[i];
    const double y = 4 + i * row;
    const double w = peak > 0 ? plot_w * b.value / peak : 0;
    s += text(left - 8, y + 16, b.label.size() > 28 ? b.label.substr(0, 27) + "\u2026" : b.label,
              "end", " class=\"label\"");
    s += rect(left, y + 3, std::max(w, 1.0), row - 6, b.marked ? kAccent : kBase, b.note);
    s += text(left + w + 6, y + 16, b.note);
  }
  return s + "</svg>";
}

std::string stacked_shares(const std::string& id, const std::vector<std::vector<double>>& cols,
                           const std::vector<std::string>& series, const std::string& x_caption) {
  const double left = 40, top = 28, plot_h = 160, plot_w = kWidth - left - 10;
  std::string s = open_svg(id, top + plot_h + 30);
  double x = left;  // legend entries side by side, each as wide as its name
  for (size_t k = 0; k < series.size(); ++k) {
    s += rect(x, 6, 12, 12, kPalette[k % 8]) +
         text(x + 16, 16, series[k], "start", " class=\"label\"");
    x += 16 + 7.0 * series[k].size() + 24;
  }
  s += text(left - 6, top + 8, "100%", "end") + text(left - 6, top + plot_h, "0", "end");
  const double step = cols.empty() ? 0 : plot_w / cols.size();
  for (size_t i = 0; i < cols.size(); ++i) {
    double y = top + plot_h;
    for (size_t k = 0; k < cols[i].size(); ++k) {
      const double h = plot_h * cols[i][k];
      y -= h;
      s += rect(left + i * step, y, step + 0.3, h, kPalette[k % 8]);
    }
  }
  s += text(left + plot_w / 2, top + plot_h + 22, x_caption, "middle", " class=\"caption\"");
  return s + "</svg>";
}

}  // namespace shard_inspect::svg
