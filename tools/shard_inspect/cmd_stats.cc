// shard-inspect stats DIR [--json] [--bins N]: what a user needs to pick --max-len: the stored
// token-length histogram, how many examples were truncated, label distribution, token counts.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/json_text.h"
#include "core/location.h"
#include "count_check.h"
#include "shard_inspect/commands.h"
#include "shard_inspect/dataset_stats.h"
#include "shard_inspect/source_flags.h"

namespace {

using shard_inspect::DatasetStats;

struct StatsArgs {
  std::string dir;
  bool json = false;
  unsigned bins = 16;
};

std::string bar(uint64_t n, uint64_t max, int width) {
  int len = max ? static_cast<int>((n * width + max - 1) / max) : 0;
  std::string s;
  for (int i = 0; i < len; ++i) s += "\u2588";
  return s;
}

void print_json(const DatasetStats& s, unsigned bins) {
  using nlohmann::ordered_json;
  ordered_json o;
  o["records"] = s.records;
  o["max_len"] = s.max_len;
  o["tokens"] = s.tokens;
  o["padding_tokens"] = s.records * s.max_len - s.tokens;
  o["min_length"] = s.min_length;
  o["max_length"] = s.max_length;
  o["records_at_max_len"] = s.at_max;
  o["padding_share"] = s.padding_share();
  if (s.examples) {
    o["examples"] = s.examples;
    o["truncated"] = s.truncated;
    o["truncated_share"] = double(s.truncated) / double(s.examples);
  }
  ordered_json& h = o["length_histogram"] = ordered_json::array();
  for (const auto& bin : s.histogram(bins))
    h.push_back(ordered_json{{"from", bin.from}, {"to", bin.to}, {"records", bin.records}});
  if (!s.source_histogram.empty()) o["source_length_histogram_log2"] = s.source_histogram;
  if (s.has_labels) {
    ordered_json& l = o["labels"] = ordered_json::array();
    for (auto [index, n] : s.labels)
      l.push_back(ordered_json{{"index", index}, {"name", s.label_name(index)}, {"records", n}});
  }
  if (s.has_answers) o["answerable_windows"] = s.answerable;
  std::printf("%s\n", shardkit::json_text(o).c_str());
}

void print_text(const std::string& dir, const DatasetStats& s, unsigned bins) {
  std::printf("dataset      %s\n", shardkit::without_secrets(dir).c_str());
  std::printf("records      %llu of max_len %u\n", (unsigned long long)s.records, s.max_len);
  std::printf("tokens       %llu real, %.1f%% padding, length %llu..%llu, mean %.1f\n",
              (unsigned long long)s.tokens, 100 * s.padding_share(),
              (unsigned long long)s.min_length, (unsigned long long)s.max_length,
              s.records ? double(s.tokens) / s.records : 0.0);
  std::printf("at max_len   %llu records (%.1f%%)\n", (unsigned long long)s.at_max,
              s.records ? 100.0 * s.at_max / s.records : 0.0);
  if (s.examples)
    std::printf("truncated    %llu of %llu examples (%.1f%%) at --max-len %u\n",
                (unsigned long long)s.truncated, (unsigned long long)s.examples,
                100.0 * s.truncated / s.examples, s.max_len);
  std::printf("\nstored length (tokens per record)\n");
  const auto hist = s.histogram(bins);
  uint64_t peak = 0;
  for (const auto& bin : hist) peak = std::max(peak, bin.records);
  for (const auto& bin : hist)
    std::printf("  %6llu-%-6llu %10llu %s\n", (unsigned long long)bin.from,
                (unsigned long long)bin.to, (unsigned long long)bin.records,
                bar(bin.records, peak, 50).c_str());
  const auto buckets = s.source_buckets();
  if (!s.source_histogram.empty()) {
    uint64_t speak = 0;
    for (const auto& bucket : buckets) speak = std::max(speak, bucket.records);
    std::printf("\nuntruncated example length (tokens, special tokens included)\n");
    for (const auto& bucket : buckets)
      std::printf("  %7llu-%-7llu %10llu %s\n", (unsigned long long)bucket.from,
                  (unsigned long long)bucket.to, (unsigned long long)bucket.records,
                  bar(bucket.records, speak, 50).c_str());
  }
  if (s.has_labels) {
    std::printf("\nlabels\n");
    uint64_t lpeak = 0;
    for (auto [l, n] : s.labels) lpeak = std::max(lpeak, n);
    for (auto [l, n] : s.labels)
      std::printf("  %3lld %-16s %10llu (%5.1f%%) %s\n", (long long)l, s.label_name(l).c_str(),
                  (unsigned long long)n, 100.0 * n / s.records, bar(n, lpeak, 40).c_str());
  }
  if (s.has_answers)
    std::printf("\nqa windows   %llu with the answer inside, %llu labelled 0/0\n",
                (unsigned long long)s.answerable, (unsigned long long)(s.records - s.answerable));
}

void run_stats(const StatsArgs& args) {
  const DatasetStats s = shard_inspect::compute_stats(args.dir, false);
  if (args.json)
    print_json(s, args.bins);
  else
    print_text(args.dir, s, args.bins);
}

const shard_inspect::RegisterCommand kStats([](CLI::App& app) {
  auto args = std::make_shared<StatsArgs>();
  CLI::App* cmd =
      app.add_subcommand("stats", "Token-length histogram, truncation, labels, token counts");
  cmd->add_option("dir", args->dir, "Dataset directory or URL (http://, https://, s3://)")
      ->required();
  cmd->add_flag("--json", args->json, "Print one JSON object");
  cmd->add_option("--bins", args->bins, "Histogram bins over 1..max_len")
      ->check(shardkit::tools::kPositiveCount);
  const auto apply_source_flags = shard_inspect::add_source_flags(cmd);
  cmd->callback([args, apply_source_flags] {
    apply_source_flags();
    run_stats(*args);
  });
});

}  // namespace
