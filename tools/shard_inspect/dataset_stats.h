// What `shard-inspect stats` prints and `shard-inspect report` charts, from one pass over a
// dataset's blocks: stored lengths, labels, QA answerability and (when asked) how often each
// token id occurs, beside the converter's own counts from the manifest.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace shard_inspect {

struct HistogramBin {
  uint64_t from = 0, to = 0;  // lengths, inclusive
  uint64_t records = 0;
};

struct DatasetStats {
  uint32_t max_len = 0;
  uint64_t records = 0, tokens = 0, at_max = 0, min_length = 0, max_length = 0;
  std::vector<uint64_t> length_counts;  // records per stored length, 0..max_len
  std::map<int64_t, uint64_t> labels;   // label index -> records (empty: no label field)
  bool has_labels = false, has_answers = false;
  uint64_t answerable = 0;                 // qa windows with the answer inside
  std::vector<std::string> label_names;    // from the manifest
  uint64_t examples = 0, truncated = 0;    // the converter's counts (0: not recorded)
  std::vector<uint64_t> source_histogram;  // untruncated example lengths, log2 buckets
  std::vector<uint64_t> token_counts;      // per token id; empty unless asked for

  double padding_share() const;
  std::string label_name(int64_t index) const;
  // Stored lengths in `bins` equal bins over 1..max_len (length 0 counts in the first).
  std::vector<HistogramBin> histogram(unsigned bins) const;
  // The log2 buckets of source_histogram up to the last non-empty one.
  std::vector<HistogramBin> source_buckets() const;
};

// Reads every block of the dataset at `location` (directory or URL). Throws Error(kUnsupported)
// for a dataset without token_ids and length fields.
DatasetStats compute_stats(const std::string& location, bool count_tokens);

}  // namespace shard_inspect
