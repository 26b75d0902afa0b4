// shard-inspect stats DIR [--json] [--bins N]: what a user needs to pick --max-len: the stored
// token-length histogram, how many examples were truncated, label distribution, token counts.
#include <algorithm>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include "core/dataset.h"
#include "core/error.h"

#include "format/shard_format.h"
#include "shard_inspect/commands.h"

namespace {

struct StatsArgs {
  std::string dir;
  bool json = false;
  unsigned bins = 16;
};

uint64_t load_field(const unsigned char* rec, const shardkit::Field& f) {
  return shardkit::format::load_le(rec + f.offset, shardkit::dtype_size(f.dtype));
}

std::string bar(uint64_t n, uint64_t max, int width) {
  int len = max ? static_cast<int>((n * width + max - 1) / max) : 0;
  std::string s;
  for (int i = 0; i < len; ++i) s += "\u2588";
  return s;
}

void run_stats(const StatsArgs& args) {
  shardkit::Dataset ds = shardkit::Dataset::open(args.dir);
  const auto& schema = ds.schema();
  const shardkit::DatasetInfo& info = ds.manifest().info;
  auto field = [&](shardkit::FieldRole role) -> const shardkit::Field* {
    const std::string* name = info.field(role);
    return name ? schema.find(*name) : nullptr;
  };
  const shardkit::Field* ids = field(shardkit::FieldRole::kTokenIds);
  const shardkit::Field* length = field(shardkit::FieldRole::kLength);
  const shardkit::Field* labels = field(shardkit::FieldRole::kLabel);
  const shardkit::Field* start = field(shardkit::FieldRole::kStartPosition);
  if (!ids || !length)
    throw shardkit::Error(
        shardkit::ErrorCode::kUnsupported, args.dir,
        "stats needs fields with the token_ids and length roles, as shardify writes");
  const uint32_t max_len = ids->shape.empty() ? 1 : ids->shape[0];
  const unsigned bins = std::max(1u, std::min(args.bins, max_len));

  std::vector<uint64_t> hist(bins, 0);
  std::map<int64_t, uint64_t> label_counts;
  uint64_t records = 0, tokens = 0, at_max = 0, answerable = 0, min_len = UINT64_MAX, max_seen = 0;
  for (uint64_t b = 0; b < ds.block_count(); ++b) {
    auto block = ds.block(b);
    for (uint32_t s = 0; s < block->records; ++s) {
      const unsigned char* rec = block->record(s);
      const uint64_t len = load_field(rec, *length);
      ++records;
      tokens += len;
      min_len = std::min(min_len, len);
      max_seen = std::max(max_seen, len);
      if (len >= max_len) ++at_max;
      const uint64_t bin = len == 0 ? 0 : std::min<uint64_t>(bins - 1, (len - 1) * bins / max_len);
      ++hist[bin];
      if (labels) ++label_counts[static_cast<int32_t>(load_field(rec, *labels))];
      if (start && load_field(rec, *start) != 0) ++answerable;
    }
  }
  if (records == 0) min_len = 0;

  // Names of labels and the converter's own counts, when shardify wrote the dataset.
  // Names of labels and the converter's own counts, when shardify wrote the dataset.
  const std::vector<std::string>& label_names = info.labels.names;
  const uint64_t examples = info.stats ? info.stats->examples : 0;
  const uint64_t truncated = info.stats ? info.stats->truncated : 0;
  std::vector<uint64_t> source_hist;
  if (info.stats)
    source_hist.assign(info.stats->length_histogram.begin(), info.stats->length_histogram.end());
  auto label_name = [&](int64_t i) {
    return i >= 0 && static_cast<size_t>(i) < label_names.size() ? label_names[i]
                                                                 : std::to_string(i);
  };
  const double padding = records ? 1.0 - double(tokens) / (double(records) * max_len) : 0.0;

  if (args.json) {
    using nlohmann::ordered_json;
    ordered_json o;
    o["records"] = records;
    o["max_len"] = max_len;
    o["tokens"] = tokens;
    o["padding_tokens"] = records * max_len - tokens;
    o["min_length"] = min_len;
    o["max_length"] = max_seen;
    o["records_at_max_len"] = at_max;
    o["padding_share"] = padding;
    if (examples) {
      o["examples"] = examples;
      o["truncated"] = truncated;
      o["truncated_share"] = double(truncated) / double(examples);
    }
    ordered_json& h = o["length_histogram"] = ordered_json::array();
    for (unsigned i = 0; i < bins; ++i)
      h.push_back(ordered_json{{"from", i * max_len / bins + 1},
                               {"to", (i + 1) * max_len / bins},
                               {"records", hist[i]}});
    if (!source_hist.empty()) o["source_length_histogram_log2"] = source_hist;
    if (labels) {
      ordered_json& l = o["labels"] = ordered_json::array();
      for (auto [index, n] : label_counts)
        l.push_back(ordered_json{{"index", index}, {"name", label_name(index)}, {"records", n}});
    }
    if (start) o["answerable_windows"] = answerable;
    std::printf("%s\n", o.dump().c_str());
    return;
  }

  std::printf("dataset      %s\n", args.dir.c_str());
  std::printf("records      %llu of max_len %u\n", (unsigned long long)records, max_len);
  std::printf("tokens       %llu real, %.1f%% padding, length %llu..%llu, mean %.1f\n",
              (unsigned long long)tokens, 100 * padding, (unsigned long long)min_len,
              (unsigned long long)max_seen, records ? double(tokens) / records : 0.0);
  std::printf("at max_len   %llu records (%.1f%%)\n", (unsigned long long)at_max,
              records ? 100.0 * at_max / records : 0.0);
  if (examples)
    std::printf("truncated    %llu of %llu examples (%.1f%%) at --max-len %u\n",
                (unsigned long long)truncated, (unsigned long long)examples,
                100.0 * truncated / examples, max_len);
  std::printf("\nstored length (tokens per record)\n");
  const uint64_t peak = *std::max_element(hist.begin(), hist.end());
  for (unsigned i = 0; i < bins; ++i)
    std::printf("  %6u-%-6u %10llu %s\n", i * max_len / bins + 1, (i + 1) * max_len / bins,
                (unsigned long long)hist[i], bar(hist[i], peak, 50).c_str());
  if (!source_hist.empty()) {
    size_t last = 0;
    for (size_t i = 0; i < source_hist.size(); ++i)
      if (source_hist[i]) last = i;
    const uint64_t speak = *std::max_element(source_hist.begin(), source_hist.end());
    std::printf("\nuntruncated example length (tokens, special tokens included)\n");
    for (size_t i = 0; i <= last; ++i)
      std::printf("  %7llu-%-7llu %10llu %s\n", (unsigned long long)(i == 0 ? 0 : 1ull << i),
                  (unsigned long long)((2ull << i) - 1), (unsigned long long)source_hist[i],
                  bar(source_hist[i], speak, 50).c_str());
  }
  if (labels) {
    std::printf("\nlabels\n");
    uint64_t lpeak = 0;
    for (auto [l, n] : label_counts) lpeak = std::max(lpeak, n);
    for (auto [l, n] : label_counts)
      std::printf("  %3lld %-16s %10llu (%5.1f%%) %s\n", (long long)l, label_name(l).c_str(),
                  (unsigned long long)n, 100.0 * n / records, bar(n, lpeak, 40).c_str());
  }
  if (start)
    std::printf("\nqa windows   %llu with the answer inside, %llu labelled 0/0\n",
                (unsigned long long)answerable, (unsigned long long)(records - answerable));
}

const shard_inspect::RegisterCommand kStats([](CLI::App& app) {
  auto args = std::make_shared<StatsArgs>();
  CLI::App* cmd =
      app.add_subcommand("stats", "Token-length histogram, truncation, labels, token counts");
  cmd->add_option("dir", args->dir, "Dataset directory or URL (http://, https://, s3://)")
      ->required();
  cmd->add_flag("--json", args->json, "Print one JSON object");
  cmd->add_option("--bins", args->bins, "Histogram bins over 1..max_len");
  cmd->callback([args] { run_stats(*args); });
});

}  // namespace
