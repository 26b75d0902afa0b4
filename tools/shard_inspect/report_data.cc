#include "shard_inspect/report_data.h"
#include "shard_inspect/source_flags.h"

#include <algorithm>
#include <filesystem>
#include <numeric>
#include <set>

#include "core/dataset_store.h"
#include "shard_inspect/stream_sources.h"
#include "tokenizer/tokenizer.h"

namespace shard_inspect {
namespace {

// Examples longer than `max_len`, bounded by the log2 buckets: the buckets wholly above it
// (low) and those reaching above it (high).
TruncationRow from_buckets(const DatasetStats& s, uint64_t max_len) {
  const uint64_t all =
      std::accumulate(s.source_histogram.begin(), s.source_histogram.end(), uint64_t{0});
  TruncationRow row{max_len, 0, 0, false};
  if (!all) return row;
  uint64_t low = 0, high = 0;
  for (const HistogramBin& b : s.source_buckets()) {
    if (b.from > max_len) low += b.records;
    if (b.to > max_len) high += b.records;
  }
  row.low = double(low) / all;
  row.high = double(high) / all;
  return row;
}

// Below the dataset's max_len a record's stored length is its example's length, when every
// record is one example.
TruncationRow from_records(const DatasetStats& s, uint64_t max_len) {
  uint64_t longer = 0;
  for (uint64_t len = max_len + 1; len < s.length_counts.size(); ++len)
    longer += s.length_counts[len];
  const double share = s.records ? double(longer) / s.records : 0;
  return {max_len, share, share, false};
}

std::string visible(std::string text) {
  std::string out;
  for (char c : text) {
    if (c == ' ')
      out += "\u2423";
    else if (c == '\n')
      out += "\u23ce";
    else
      out += c;
  }
  return out;
}

std::string rule_text(const shardkit::loader::MixtureSource& s) {
  auto n = [](double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", v);
    return std::string(buf);
  };
  if (s.weight) return "weight " + n(*s.weight);
  if (s.repeat) return "repeat " + n(*s.repeat);
  if (s.choose) return "choose " + std::to_string(*s.choose);
  return "once";
}

// A source as the spec names it: relative to the spec's folder when inside it.
std::string shown_path(const std::string& path, const std::string& spec) {
  if (path.find("://") != std::string::npos) return path;
  const auto relative =
      std::filesystem::path(path).lexically_relative(std::filesystem::path(spec).parent_path());
  return relative.empty() || *relative.begin() == ".." ? path : relative.string();
}

uint64_t dataset_tokens(const std::string& path) {
  const shardkit::Manifest m = shardkit::open_store(path, source_options())->load_manifest();
  return m.info.stats ? m.info.stats->tokens : compute_stats(path, false).tokens;
}

}  // namespace

std::vector<TruncationRow> truncation_rows(const DatasetStats& s) {
  const uint64_t m = s.max_len;
  const bool one_record_per_example = s.examples && s.records == s.examples;
  std::vector<TruncationRow> rows;
  for (uint64_t len : std::set<uint64_t>{m / 4, m / 2, m, m * 2, m * 4}) {
    if (len == 0) continue;
    TruncationRow row;
    if (len == m && s.examples) {
      const double share = double(s.truncated) / s.examples;
      row = {m, share, share, false};
    } else if (len < m && one_record_per_example) {
      row = from_records(s, len);
    } else if (!s.source_histogram.empty()) {
      row = from_buckets(s, len);
    } else {
      continue;
    }
    row.chosen = len == m;
    rows.push_back(row);
  }
  return rows;
}

std::vector<TokenRow> top_tokens(const DatasetStats& s, size_t count,
                                 const shardkit::tok::Tokenizer* tokenizer) {
  std::vector<uint64_t> ids(s.token_counts.size());
  std::iota(ids.begin(), ids.end(), 0);
  count = std::min(count, ids.size());
  std::partial_sort(ids.begin(), ids.begin() + count, ids.end(), [&](uint64_t a, uint64_t b) {
    return s.token_counts[a] != s.token_counts[b] ? s.token_counts[a] > s.token_counts[b] : a < b;
  });
  std::vector<TokenRow> rows;
  for (size_t i = 0; i < count && s.token_counts[ids[i]]; ++i) {
    TokenRow row{ids[i], s.token_counts[ids[i]], {}};
    if (tokenizer) {
      const uint32_t id = static_cast<uint32_t>(ids[i]);
      row.text = tokenizer->decode({&id, 1}, false);
      if (row.text.empty()) row.text = tokenizer->id_to_token(id);
      row.text = visible(row.text);
    }
    rows.push_back(row);
  }
  return rows;
}

MixtureView mixture_view(const std::string& spec, shardkit::loader::LoaderOptions options,
                         bool seed_given) {
  const StreamSources sources = load_stream_sources("", spec, options, seed_given);
  const auto& stream = sources.stream;
  MixtureView view;
  view.batch_size = std::max<uint64_t>(1, options.batch_size);
  const std::vector<uint64_t> drawn = stream->counts_before(stream->size());
  for (size_t i = 0; i < sources.sources.size(); ++i)
    view.sources.push_back({shown_path(sources.sources[i].path, spec),
                            rule_text(sources.sources[i]), sources.sizes[i],
                            dataset_tokens(sources.sources[i].path), drawn[i]});
  view.steps = (stream->size() + view.batch_size - 1) / view.batch_size;
  // At most 120 columns, evenly spread over the epoch's steps.
  const uint64_t shown = std::min<uint64_t>(view.steps, 120);
  shardkit::loader::MixtureStream::Cursor cursor;
  for (uint64_t c = 0; c < shown; ++c) {
    const uint64_t step = c * view.steps / shown;
    const uint64_t from = step * view.batch_size;
    const uint64_t to = std::min(stream->size(), from + view.batch_size);
    const auto before = stream->counts_before(from, &cursor);
    const auto after = stream->counts_before(to, &cursor);
    std::vector<double> shares;
    for (size_t i = 0; i < before.size(); ++i)
      shares.push_back(double(after[i] - before[i]) / double(to - from));
    view.sampled_steps.push_back(step);
    view.columns.push_back(std::move(shares));
  }
  return view;
}

}  // namespace shard_inspect
