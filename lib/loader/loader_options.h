// Everything a Loader can be told. Only the fields marked [order] change which records a batch
// holds; the rest change speed, memory or the shape of the tensors.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/block_source.h"
#include "core/dataset_info.h"
#include "loader/batch.h"

namespace shardkit::loader {

// Integer fields are widened on the way into a batch: int64 is what HF models expect.
enum class IntOutput { kInt64, kInt32, kKeep };

struct MlmOptions {
  bool enabled = false;
  double probability = 0.15;     // share of real (non-special, non-padding) tokens selected
  double mask_fraction = 0.8;    // of selected: replaced by mask_token_id
  double random_fraction = 0.1;  // of selected: replaced by a uniform id in [0, vocab_size)
  // Left at these defaults, the next four come from the dataset's tokenizer (DatasetInfo).
  int64_t mask_token_id = -1;           // [MASK]
  uint64_t vocab_size = 0;              // random replacements are drawn from [0, vocab_size)
  std::vector<int64_t> special_ids;     // never selected ([CLS], [SEP], [PAD], ...)
  std::string input_field;              // the token ids field
  std::string labels_field = "labels";  // written: the original id where selected, else -100
  int64_t ignore_index = -100;
};

// What a block that fails its checksum (for a remote dataset: after the one refetch) does.
enum class OnCorrupt {
  kFail,  // next() throws Error(kCorrupt) naming the shard file or URL and the block
  // The block's records are replaced by a deterministic substitute's: the next intact block of
  // the same shuffle window in the window's block order, slot for slot (wrapping in a shorter
  // block). Every rank picks the same one, so batch shapes, step counts and the global stream
  // agree across ranks; each damaged block is logged once (stderr) and counted in
  // LoaderState::blocks_skipped.
  kSkip,
};

// How each global step's rows are split among the ranks, and so which blocks each rank reads.
enum class Partition {
  // Rank r takes the r-th run of batch_size positions of each step: every rank reads every
  // block of each shuffle window and keeps 1/world_size of its rows. The order of every
  // earlier version.
  kRows,
  // The order is defined over `partitions` canonical partitions of each epoch's shuffled blocks;
  // each node's ranks take the positions of its partitions and read only their blocks, about
  // 1/nodes of the dataset per node (README, "Nodes: each reads its share").
  kNodes,
};

// Runs on a loader thread after collation (and MLM); must be thread-safe and, for exact resume,
// a pure function of the batch (its records and epoch are in it).
using BatchTransform = std::function<void(Batch&)>;

// Packed lm (DatasetInfo task.packed): where each document of a row begins, derived from the
// stored ids, since every document ends with task.separator_id (format/SPEC.md "Dataset info"
// says when that is exact). A row's first token starts a document even when it continues one
// from the row before. Packed sft stores where its conversations start (starts_field).
struct DocumentOptions {
  // position_ids [B, T]: 0, 1, ... restarting after each separator; 0 on padding.
  bool position_ids = false;
  // cu_seqlens int32 [documents + 1] and max_seqlen int32 [], flash-attn's varlen convention:
  // the offsets of each document in the batch's real tokens (padding left out), row after row,
  // i.e. in input_ids[attention_mask.bool()].
  bool cu_seqlens = false;
  // attention_mask u8 [B, 1, T, T] for SDPA (attn_mask=mask.bool(), no is_causal): query i sees
  // key j when both are in one document and j <= i; padding sees only earlier padding. It
  // replaces the [B, T] mask.
  bool attention_mask = false;
  uint32_t max_mask_length = 4096;  // the [B, 1, T, T] mask is refused for a longer L
  // Left unset: the dataset's task.separator_id.
  std::optional<uint32_t> separator_id;
  // Left empty: the field with the document_starts role (packed sft), which wins over a separator.
  std::string starts_field;
  bool any() const { return position_ids || cu_seqlens || attention_mask; }
};

struct LoaderOptions {
  // What is read, in which order. [order]
  uint64_t batch_size = 32;
  bool shuffle = true;
  uint64_t seed = 0;
  // This process's share. Left at kFromEnvironment, they come from RANK and WORLD_SIZE (as
  // torchrun sets them), else 0 and 1.
  static constexpr uint32_t kFromEnvironment = UINT32_MAX;
  uint32_t rank = kFromEnvironment;
  uint32_t world_size = kFromEnvironment;
  bool drop_last = false;
  // Ranks per node (nodes plan): left at kFromEnvironment, LOCAL_WORLD_SIZE (as torchrun sets
  // it), else world_size (one node). Rank r is local rank r mod ranks_per_node of node
  // r div ranks_per_node, torchrun's numbering.
  uint32_t ranks_per_node = kFromEnvironment;
  // Which plan splits a step among ranks, and the canonical partitions of the nodes plan. [order]
  Partition partition = Partition::kRows;
  uint32_t partitions = 64;
  // Blocks mixed together by the shuffle; 0 derives it from memory_budget (see README). [order]
  uint64_t window_blocks = 0;
  // Budgets per epoch; 0: none. [order]
  // max_samples: the epoch ends after this many samples (global, all ranks). A weighted mixture
  // runs for exactly max_samples (its sources wrap); otherwise the epoch is cut to it.
  uint64_t max_samples = 0;
  // max_tokens: the epoch ends at the sample whose tokens bring the total, summed over every
  // rank's rows of this epoch so far, to max_tokens; a row's tokens are its `length` (real
  // tokens, padding excluded). That sample's step is cut after it and becomes the epoch's last,
  // shorter step (padded, or dropped with drop_last, like any last step), so the end is the same
  // at every world size and batch size and every rank stops after the same step. Each rank reads
  // the lengths of the other ranks' rows of a step to count them.
  uint64_t max_tokens = 0;
  // A block that fails its checksum: fail (default) or replace it (OnCorrupt). [order, only
  // where data is damaged]
  OnCorrupt on_corrupt = OnCorrupt::kFail;

  // Resources.
  unsigned threads = 0;                  // 0: default_thread_count() (distributed_env.h)
  size_t memory_budget = 512u << 20;     // decoded blocks + batches in flight, in bytes
  size_t prefetch_batches = 0;           // batches built ahead; 0: 2 per thread, within the budget
  std::chrono::milliseconds timeout{0};  // next() waits at most this long; 0: forever
  // How shard bytes are read: pread (default) or mmap for local files; remote_concurrency,
  // cache_dir and cache_limit for http(s):// and s3:// datasets.
  SourceOptions source;

  // Batch layout.
  // Stored fields to return; empty: every stored field that a model takes, under HF names, so
  // that model(**batch) works: input_ids, token_type_ids, position_ids, labels,
  // start_positions, end_positions (plus the derived attention_mask).
  std::vector<std::string> fields;
  // Also return the stored bookkeeping that no model's forward() accepts: fields whose role
  // (DatasetInfo) is length or first_segment_length, which masks are derived from, and QA's
  // example_index and source_index (which map a window back to its question). Fields named in
  // `fields` are returned either way.
  bool include_metadata = false;
  IntOutput int_output = IntOutput::kInt64;
  bool dynamic_padding = true;      // trim sequence fields to the longest row of the batch
  uint32_t pad_to_multiple_of = 1;  // e.g. 8 for tensor cores
  // Empty: the fields with the token_ids and length roles (DatasetInfo).
  std::string sequence_field;  // its length L marks the [L]-shaped fields
  std::string length_field;    // real tokens per row
  // attention_mask is derived from length_field unless stored; token_type_ids from a field with
  // the first_segment_length role unless stored.
  bool attention_mask = true;
  // Adds `source` [B]: the index of the source each row came from (mixtures; 0 for one dataset).
  bool source_field = false;
  MlmOptions mlm;
  // sft (DatasetInfo task "sft"): `labels` [B, T] materialised from the ids and the stored loss
  // mask (the field with the loss_mask role; without one every real token is trained): the id
  // where the mask is on, ignore_index elsewhere, on padding and on the first token of every
  // packed conversation (which a causal loss would otherwise predict from the conversation
  // before). Signed: int64, or int32 when int_output asks for narrower integers.
  bool sft_labels = true;
  int64_t ignore_index = -100;
  DocumentOptions documents;
  std::vector<BatchTransform> transforms;
};

// "rows" / "nodes"; "fail" / "skip".
const char* partition_name(Partition partition);
const char* on_corrupt_name(OnCorrupt on_corrupt);

// The options with what they leave open filled from the dataset's contract: sequence and
// length fields by role; the packed separator; for MLM the input field, [MASK] id, vocabulary size
// and special ids.
LoaderOptions with_dataset_defaults(LoaderOptions options, const DatasetInfo& info);

// The state that restores a stream exactly, at any world size and batch size: seed, epoch, the
// global samples consumed (a prefix of the epoch's order; the epoch's size once a budget ended
// it) and, with max_tokens, the global tokens counted so far this epoch.
struct LoaderState {
  uint64_t seed = 0;
  uint64_t epoch = 0;
  uint64_t samples_consumed = 0;
  uint64_t tokens_consumed = 0;
  // Which stream this is a position in (stream_fingerprints()): restore() refuses a state saved
  // over other data or with another order. Empty in states saved before it was recorded, which
  // restore() accepts as before.
  std::string fingerprint;
  // Damaged blocks this rank's batches had replaced this epoch (on_corrupt = kSkip).
  uint64_t blocks_skipped = 0;
  // Which they are, (source, block): a block whose rows lie on both sides of the saved position
  // is counted once across a resume. Empty in states saved before they were recorded, whose
  // count a restore adds to as before.
  std::vector<std::pair<uint32_t, uint64_t>> skipped_blocks;

  // So that {seed, epoch, samples_consumed, tokens_consumed} keeps meaning what it did.
  LoaderState(uint64_t seed_ = 0, uint64_t epoch_ = 0, uint64_t samples_consumed_ = 0,
              uint64_t tokens_consumed_ = 0, std::string fingerprint_ = {},
              uint64_t blocks_skipped_ = 0,
              std::vector<std::pair<uint32_t, uint64_t>> skipped_blocks_ = {})
      : seed(seed_),
        epoch(epoch_),
        samples_consumed(samples_consumed_),
        tokens_consumed(tokens_consumed_),
        fingerprint(std::move(fingerprint_)),
        blocks_skipped(blocks_skipped_),
        skipped_blocks(std::move(skipped_blocks_)) {}
  bool operator==(const LoaderState&) const = default;
};

}  // namespace shardkit::loader
