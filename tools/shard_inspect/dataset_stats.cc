#include "shard_inspect/dataset_stats.h"
#include "shard_inspect/source_flags.h"

#include <algorithm>

#include "core/dataset.h"
#include "core/error.h"
#include "format/shard_format.h"

namespace shard_inspect {
namespace {

uint64_t load_element(const unsigned char* record, const shardkit::Field& f, size_t k = 0) {
  const size_t size = shardkit::dtype_size(f.dtype);
  return shardkit::format::load_le(record + f.offset + k * size, size);
}

struct Fields {
  const shardkit::Field *ids, *length, *label, *start;
};

Fields fields_of(const shardkit::Dataset& ds, const std::string& location) {
  const shardkit::DatasetInfo& info = ds.manifest().info;
  auto field = [&](shardkit::FieldRole role) -> const shardkit::Field* {
    const std::string* name = info.field(role);
    return name ? ds.schema().find(*name) : nullptr;
  };
  Fields f{field(shardkit::FieldRole::kTokenIds), field(shardkit::FieldRole::kLength),
           field(shardkit::FieldRole::kLabel), field(shardkit::FieldRole::kStartPosition)};
  if (!f.ids || !f.length)
    throw shardkit::Error(
        shardkit::ErrorCode::kUnsupported, location,
        "stats and report need fields with the token_ids and length roles, as shardify "
        "writes");
  return f;
}

void count_record(const unsigned char* rec, const Fields& f, bool count_tokens, DatasetStats& s) {
  const uint64_t len = std::min<uint64_t>(load_element(rec, *f.length), s.max_len);
  ++s.records;
  s.tokens += len;
  s.min_length = std::min(s.min_length, len);
  s.max_length = std::max(s.max_length, len);
  if (len >= s.max_len) ++s.at_max;
  ++s.length_counts[len];
  if (f.label) ++s.labels[static_cast<int32_t>(load_element(rec, *f.label))];
  if (f.start && load_element(rec, *f.start) != 0) ++s.answerable;
  if (!count_tokens) return;
  for (uint64_t k = 0; k < len; ++k) {
    const uint64_t id = load_element(rec, *f.ids, k);
    if (id >= s.token_counts.size()) s.token_counts.resize(id + 1);
    ++s.token_counts[id];
  }
}

}  // namespace

DatasetStats compute_stats(const std::string& location, bool count_tokens) {
  shardkit::Dataset ds = shardkit::Dataset::open(location, dataset_options());
  const Fields f = fields_of(ds, location);
  const shardkit::DatasetInfo& info = ds.manifest().info;
  DatasetStats s;
  s.max_len = f.ids->shape.empty() ? 1 : f.ids->shape[0];
  s.length_counts.assign(s.max_len + 1, 0);
  s.min_length = UINT64_MAX;
  s.has_labels = f.label != nullptr;
  s.has_answers = f.start != nullptr;
  if (count_tokens) s.token_counts.assign(info.tokenizer.vocab_size, 0);
  for (uint64_t b = 0; b < ds.block_count(); ++b) {
    auto block = ds.block(b);
    for (uint32_t r = 0; r < block->records; ++r)
      count_record(block->record(r), f, count_tokens, s);
  }
  if (s.records == 0) s.min_length = 0;
  s.label_names = info.labels.names;
  // A declared class without records is what a user looks for here: listed with 0.
  if (s.has_labels)
    for (size_t i = 0; i < s.label_names.size(); ++i) s.labels.try_emplace(int64_t(i), 0);
  if (info.stats) {
    s.examples = info.stats->examples;
    s.truncated = info.stats->truncated;
    s.source_histogram.assign(info.stats->length_histogram.begin(),
                              info.stats->length_histogram.end());
  }
  return s;
}

double DatasetStats::padding_share() const {
  return records ? 1.0 - double(tokens) / (double(records) * max_len) : 0.0;
}

std::string DatasetStats::label_name(int64_t i) const {
  return i >= 0 && static_cast<size_t>(i) < label_names.size() ? label_names[i] : std::to_string(i);
}

std::vector<HistogramBin> DatasetStats::histogram(unsigned bins) const {
  bins = std::max(1u, std::min(bins, max_len));
  std::vector<HistogramBin> out(bins);
  for (unsigned i = 0; i < bins; ++i)
    out[i] = {uint64_t{i} * max_len / bins + 1, uint64_t{i + 1} * max_len / bins, 0};
  // Bin i ends at floor((i + 1) * max_len / bins): a length goes to the first bin ending at or
  // after it, ceil(len * bins / max_len) - 1.
  for (uint64_t len = 0; len < length_counts.size(); ++len) {
    const uint64_t ends_after = (len * bins + max_len - 1) / max_len;
    out[std::min<uint64_t>(bins - 1, ends_after == 0 ? 0 : ends_after - 1)].records +=
        length_counts[len];
  }
  return out;
}

std::vector<HistogramBin> DatasetStats::source_buckets() const {
  size_t last = 0;
  for (size_t i = 0; i < source_histogram.size(); ++i)
    if (source_histogram[i]) last = i;
  std::vector<HistogramBin> out;
  for (size_t i = 0; i <= last && i < source_histogram.size(); ++i)
    out.push_back({i == 0 ? 0 : 1ull << i, (2ull << i) - 1, source_histogram[i]});
  return out;
}

}  // namespace shard_inspect
