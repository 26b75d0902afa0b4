// What `shard-inspect report` shows, gathered from the commands' own computations: the stats
// scan (stats), the checksum pass (verify), the mixture stream (order) and, when given, the
// tokenizer that made the dataset.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/manifest.h"
#include "core/verify.h"
#include "loader/loader_options.h"
#include "shard_inspect/dataset_stats.h"

namespace shardkit::tok {
class Tokenizer;
}

namespace shard_inspect {

// The share of examples longer than max_len tokens, i.e. truncated (or windowed) at it. Exact
// when low == high; otherwise the log2 length buckets bound it.
struct TruncationRow {
  uint64_t max_len = 0;
  double low = 0, high = 0;
  bool chosen = false;  // the dataset's own --max-len
};

struct TokenRow {
  uint64_t id = 0, count = 0;
  std::string text;  // decoded, with visible spaces; empty without a tokenizer
};

struct SourceRow {
  std::string path, rule;
  uint64_t records = 0, tokens = 0;
  uint64_t samples = 0;  // in one epoch of the mixture
};

struct MixtureView {
  std::vector<SourceRow> sources;
  uint64_t batch_size = 0, steps = 0;
  std::vector<uint64_t> sampled_steps;       // which steps the columns show
  std::vector<std::vector<double>> columns;  // per sampled step: each source's share of it
};

struct ReportData {
  std::string dir;
  shardkit::Manifest manifest;
  DatasetStats stats;
  shardkit::VerifyReport verify;
  bool scanned = false;  // the sections below need every block: only when verify found no fault
  std::vector<TruncationRow> truncation;
  std::vector<TokenRow> top_tokens;
  bool decoded = false;
  std::vector<MixtureView> mixture;  // empty, or one view
};

std::vector<TruncationRow> truncation_rows(const DatasetStats& stats);
// The `count` most frequent token ids, decoded by `tokenizer` when it is not null.
std::vector<TokenRow> top_tokens(const DatasetStats& stats, size_t count,
                                 const shardkit::tok::Tokenizer* tokenizer);
// The sources of the mixture spec, what one epoch draws from each, and each step's shares.
MixtureView mixture_view(const std::string& spec, shardkit::loader::LoaderOptions options,
                         bool seed_given);

}  // namespace shard_inspect
