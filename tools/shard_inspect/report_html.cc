#include "shard_inspect/report_html.h"

#include <cstdio>

#include "core/progress.h"
#include "shard_inspect/svg_chart.h"

namespace shard_inspect {
namespace {

using shardkit::count_text;
using svg::escape;

constexpr const char* kStyle = R"(
body { font-family: sans-serif; color: #222; max-width: 800px; margin: 24px auto; padding: 0 12px; }
h1 { font-size: 22px; } h2 { font-size: 17px; margin-top: 28px; border-bottom: 1px solid #ddd; }
table { border-collapse: collapse; font-size: 14px; }
td, th { padding: 3px 10px 3px 0; text-align: left; } td.n, th.n { text-align: right; }
.ok { color: #1a7f37; font-weight: bold; } .fault { color: #c62828; font-weight: bold; }
.note { color: #555; font-size: 13px; }
svg.chart { display: block; margin: 8px 0; font-size: 12px; }
svg .caption { fill: #555; } svg .tick { fill: #444; font-size: 11px; }
)";

std::string percent(double share) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", 100 * share);
  return buf;
}

// A table row; every cell but the first is a number, aligned right, unless `text` says otherwise.
std::string row(std::initializer_list<std::string> cells, bool header = false, bool text = false) {
  std::string s = "<tr>";
  bool first = true;
  for (const std::string& c : cells) {
    const char* tag = header ? "th" : "td";
    s += std::string("<") + tag + (first || text ? "" : " class=\"n\"") + ">" + escape(c) + "</" +
         tag + ">";
    first = false;
  }
  return s + "</tr>";
}

std::string fact(const std::string& name, const std::string& value) {
  return row({name, value}, false, true);
}

std::string facts(const ReportData& d) {
  const shardkit::DatasetInfo& info = d.manifest.info;
  std::string s = "<table>";
  s += fact("records", count_text(d.manifest.record_count()));
  if (info.task.type)
    s += fact("task", std::string(shardkit::task_name(*info.task.type)) +
                          (info.task.packed ? ", packed" : ""));
  if (d.scanned) {
    s += fact("max_len", count_text(d.stats.max_len));
    s += fact("tokens", count_text(d.stats.tokens) + " real, " + percent(d.stats.padding_share()) +
                            " padding");
  }
  if (!info.tokenizer.type.empty())
    s += fact("tokenizer", info.tokenizer.type + ", vocabulary " +
                               count_text(info.tokenizer.vocab_size) + ", fingerprint " +
                               info.tokenizer.fingerprint);
  s += fact("shards", count_text(d.manifest.shards.size()) + ", " +
                          count_text(d.manifest.bytes_on_disk()) + " bytes on disk");
  return s + "</table>";
}

std::string checksums(const shardkit::VerifyReport& v) {
  if (v.ok())
    return "<p id=\"checksums\" class=\"ok\">Every checksum verified (shards " +
           count_text(v.shards_checked) + ", blocks " + count_text(v.blocks_checked) +
           ", records " + count_text(v.records_checked) + ").</p>";
  std::string s = "<p id=\"checksums\" class=\"fault\">" + count_text(v.faults.size()) +
                  " fault(s); " + count_text(v.blocks_checked) + " blocks verified.</p><ul>";
  for (const auto& f : v.faults) s += "<li>" + escape(f.message) + "</li>";
  return s + "</ul>";
}

std::string lengths(const ReportData& d) {
  const DatasetStats& st = d.stats;
  std::vector<svg::Bar> stored;
  for (const HistogramBin& b : st.histogram(32))
    stored.push_back({b.from == b.to ? std::to_string(b.from)
                                     : std::to_string(b.from) + "-" + std::to_string(b.to),
                      double(b.records), count_text(b.records) + " records", b.to >= st.max_len});
  std::string s = "<h2>Lengths</h2><p>Stored tokens per record; the last bin is at --max-len " +
                  count_text(st.max_len) + ".</p>" +
                  svg::columns("stored-lengths", stored, "records");
  if (!st.source_histogram.empty()) {
    std::vector<svg::Bar> source;
    for (const HistogramBin& b : st.source_buckets())
      source.push_back({count_text(b.from), double(b.records),
                        count_text(b.records) + " examples of " + count_text(b.from) + "-" +
                            count_text(b.to) + " tokens",
                        b.to > st.max_len});
    s += "<p>Examples before truncation, by length (powers of two; red buckets reach past "
         "--max-len).</p>" +
         svg::columns("source-lengths", source, "examples");
  }
  if (d.truncation.empty()) return s;
  s += "<table id=\"truncation\">" + row({"--max-len", "examples longer (truncated)"}, true);
  for (const TruncationRow& t : d.truncation) {
    const std::string share =
        t.low == t.high ? percent(t.low) : percent(t.low) + " to " + percent(t.high);
    s += row({count_text(t.max_len) + (t.chosen ? " (this dataset)" : ""), share});
  }
  return s + "</table><p class=\"note\">A range comes from the power-of-two buckets above.</p>";
}

std::string labels(const DatasetStats& st) {
  if (!st.has_labels) return "";
  std::vector<svg::Bar> bars;
  for (auto [index, n] : st.labels)
    bars.push_back({st.label_name(index), double(n),
                    count_text(n) + " (" + percent(st.records ? double(n) / st.records : 0) + ")"});
  return "<h2>Labels</h2>" + svg::bar_rows("labels", bars);
}

std::string tokens(const ReportData& d) {
  if (d.top_tokens.empty()) return "";
  std::vector<svg::Bar> bars;
  for (const TokenRow& t : d.top_tokens)
    bars.push_back({(t.text.empty() ? "" : t.text + "  ") + "#" + std::to_string(t.id),
                    double(t.count),
                    count_text(t.count) + " (" +
                        percent(d.stats.tokens ? double(t.count) / d.stats.tokens : 0) + ")"});
  return std::string("<h2>Most frequent tokens</h2><p>") +
         (d.decoded ? "Decoded with the tokenizer given (\u2423 is a space)."
                    : "Token ids; give --decode TOKENIZER to see them as text.") +
         "</p>" + svg::bar_rows("top-tokens", bars);
}

std::string mixture(const MixtureView& m) {
  std::string s = "<h2>Mixture</h2><table id=\"sources\">" +
                  row({"source", "rule", "records", "tokens", "samples an epoch", "share"}, true);
  uint64_t total = 0;
  for (const SourceRow& r : m.sources) total += r.samples;
  std::vector<svg::Bar> token_bars;
  std::vector<std::string> names;
  for (const SourceRow& r : m.sources) {
    s += row({r.path, r.rule, count_text(r.records), count_text(r.tokens), count_text(r.samples),
              percent(total ? double(r.samples) / total : 0)});
    token_bars.push_back({r.path, double(r.tokens), count_text(r.tokens) + " tokens"});
    names.push_back(r.path);
  }
  s += "</table><p>Tokens per source:</p>" + svg::bar_rows("source-tokens", token_bars);
  s += "<p>Each source's share of every step (batch " + count_text(m.batch_size) + ", " +
       count_text(m.steps) + " steps an epoch" +
       (m.columns.size() < m.steps ? ", " + count_text(m.columns.size()) + " of them shown" : "") +
       "):</p>";
  return s + svg::stacked_shares("mixture-steps", m.columns, names, "step");
}

}  // namespace

std::string report_html(const ReportData& d) {
  std::string s = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>" +
                  escape("shardkit report: " + d.dir) + "</title><style>" + kStyle +
                  "</style></head><body>";
  s += "<h1>" + escape(d.dir) + "</h1>" + facts(d) + "<h2>Checksums</h2>" + checksums(d.verify);
  if (d.scanned)
    s += lengths(d) + labels(d.stats) + tokens(d);
  else
    s += "<p>Lengths, labels and tokens are left out: they need every block readable.</p>";
  for (const MixtureView& m : d.mixture) s += mixture(m);
  return s + "<p class=\"note\">Written by shard-inspect report.</p></body></html>\n";
}

}  // namespace shard_inspect
