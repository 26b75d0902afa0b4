// shard-inspect stats DIR [--json] [--bins N]: what a user needs to pick --max-len: the stored
// token-length histogram, how many examples were truncated, label distribution, token counts.
// shard-inspect does not link simdjson::simdjson itself; its parser layout depends on this
// definition, which the core library (and so the parser code linked in) is built with.
#ifndef SIMDJSON_THREADS_ENABLED
#define SIMDJSON_THREADS_ENABLED 1
#endif
#include <simdjson.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "core/dataset.h"
#include "core/error.h"
#include "core/json_text.h"
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
  const shardkit::Field* ids = schema.find("input_ids");
  const shardkit::Field* length = schema.find("length");
  const shardkit::Field* labels = schema.find("labels");
  const shardkit::Field* start = schema.find("start_positions");
  if (!ids || !length)
    throw shardkit::Error(shardkit::ErrorCode::kUnsupported, args.dir,
                          "stats needs the input_ids and length fields that shardify writes");
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
  simdjson::dom::parser parser;
  std::vector<std::string> label_names;
  if (auto m = ds.metadata("labels")) {
    simdjson::dom::element e;
    simdjson::dom::array names;
    if (!parser.parse(*m).get(e) && !e["names"].get_array().get(names))
      for (auto n : names)
        label_names.emplace_back(std::string_view(n.get_string().value_unsafe()));
  }
  uint64_t examples = 0, truncated = 0;
  std::vector<uint64_t> source_hist;
  if (auto m = ds.metadata("stats")) {
    simdjson::dom::parser p2;
    simdjson::dom::element e;
    if (!p2.parse(*m).get(e)) {
      if (e["examples"].get_uint64().get(examples)) examples = 0;
      if (e["truncated"].get_uint64().get(truncated)) truncated = 0;
      simdjson::dom::array h;
      if (!e["length_histogram_log2"].get_array().get(h))
        for (auto v : h) source_hist.push_back(v.get_uint64().value_unsafe());
    }
  }
  auto label_name = [&](int64_t i) {
    return i >= 0 && static_cast<size_t>(i) < label_names.size() ? label_names[i]
                                                                 : std::to_string(i);
  };
  const double padding = records ? 1.0 - double(tokens) / (double(records) * max_len) : 0.0;

  if (args.json) {
    std::string o = "{\"records\":" + std::to_string(records) +
                    ",\"max_len\":" + std::to_string(max_len) +
                    ",\"tokens\":" + std::to_string(tokens) +
                    ",\"padding_tokens\":" + std::to_string(records * max_len - tokens) +
                    ",\"min_length\":" + std::to_string(min_len) +
                    ",\"max_length\":" + std::to_string(max_seen) +
                    ",\"records_at_max_len\":" + std::to_string(at_max);
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.6f", padding);
    o += ",\"padding_share\":" + std::string(buf);
    if (examples) {
      std::snprintf(buf, sizeof buf, "%.6f", double(truncated) / double(examples));
      o += ",\"examples\":" + std::to_string(examples) +
           ",\"truncated\":" + std::to_string(truncated) + ",\"truncated_share\":" + buf;
    }
    o += ",\"length_histogram\":[";
    for (unsigned i = 0; i < bins; ++i)
      o += (i ? "," : "") + std::string("{\"from\":") + std::to_string(i * max_len / bins + 1) +
           ",\"to\":" + std::to_string((i + 1) * max_len / bins) +
           ",\"records\":" + std::to_string(hist[i]) + "}";
    o += "]";
    if (!source_hist.empty()) {
      o += ",\"source_length_histogram_log2\":[";
      for (size_t i = 0; i < source_hist.size(); ++i)
        o += (i ? "," : "") + std::to_string(source_hist[i]);
      o += "]";
    }
    if (labels) {
      o += ",\"labels\":[";
      size_t k = 0;
      for (auto [l, n] : label_counts)
        o += (k++ ? "," : "") + std::string("{\"index\":") + std::to_string(l) +
             ",\"name\":" + shardkit::json_quote(label_name(l)) +
             ",\"records\":" + std::to_string(n) + "}";
      o += "]";
    }
    if (start) o += ",\"answerable_windows\":" + std::to_string(answerable);
    std::printf("%s}\n", o.c_str());
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
  cmd->add_option("dir", args->dir, "Dataset directory or URL (http://, https://, s3://)")->required();
  cmd->add_flag("--json", args->json, "Print one JSON object");
  cmd->add_option("--bins", args->bins, "Histogram bins over 1..max_len");
  cmd->callback([args] { run_stats(*args); });
});

}  // namespace
