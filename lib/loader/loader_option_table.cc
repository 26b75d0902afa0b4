#include "loader/loader_option_table.h"

#include "core/source_option_table.h"

namespace shardkit::loader {
namespace {

using options::computed_option;
using options::Kind;
using options::Option;
using options::option;
using options::Value;
using O = LoaderOptions;

// rank and world_size: unset means "from RANK and WORLD_SIZE" (kFromEnvironment).
template <class Access>
Option<O> from_environment(std::string name, std::string help, Access access) {
  return computed_option<O>(
             std::move(name), Kind::kUInt, std::move(help),
             [access](const O& o) -> Value {
               const uint32_t v = access(o);
               return v == O::kFromEnvironment ? Value{} : Value(uint64_t(v));
             },
             [access](O& o, const Value& v) {
               access(o) = std::holds_alternative<uint64_t>(v) ? uint32_t(std::get<uint64_t>(v))
                                                               : O::kFromEnvironment;
             })
      .range(0, O::kFromEnvironment - 1)
      .affects_order();
}

std::vector<Option<O>> order_options() {
  return {
      option<O>(
          "batch_size", "Samples per batch on each rank",
          [](auto& o) -> auto& { return o.batch_size; })
          .at_least(1)
          .affects_order(),
      option<O>(
          "shuffle", "Shuffle (false: records in order, for evaluation)",
          [](auto& o) -> auto& { return o.shuffle; })
          .affects_order(),
      option<O>(
          "seed", "Shuffle seed", [](auto& o) -> auto& { return o.seed; })
          .affects_order(),
      from_environment(
          "rank", "This process's rank; unset: RANK from the environment, else 0",
          [](auto& o) -> auto& { return o.rank; })
          .defaults_to("$RANK, else 0"),
      from_environment(
          "world_size", "Number of ranks; unset: WORLD_SIZE from the environment, else 1",
          [](auto& o) -> auto& { return o.world_size; })
          .range(1, O::kFromEnvironment - 1)
          .defaults_to("$WORLD_SIZE, else 1"),
      option<O>(
          "drop_last", "Drop the last global batch when it is short",
          [](auto& o) -> auto& { return o.drop_last; })
          .affects_order(),
      options::choice_option<O>(
          "partition",
          "How each step's rows are split among ranks: rows (every rank reads every block of a "
          "window) or nodes (each node's ranks read only their partitions' blocks, about "
          "1/nodes of the dataset per node; another order)",
          [](auto& o) -> auto& { return o.partition; },
          options::named(partition_name, {Partition::kRows, Partition::kNodes}))
          .affects_order(),
      option<O>(
          "partitions",
          "partition='nodes': the canonical partitions the order is defined over; node counts "
          "and world sizes that divide it read disjoint blocks",
          [](auto& o) -> auto& { return o.partitions; })
          .range(1, 65536)
          .affects_order(),
      from_environment(
          "ranks_per_node",
          "partition='nodes': ranks per node; unset: LOCAL_WORLD_SIZE from the environment, "
          "else world_size",
          [](auto& o) -> auto& { return o.ranks_per_node; })
          .range(1, O::kFromEnvironment - 1)
          .defaults_to("$LOCAL_WORLD_SIZE, else world_size"),
      option<O>(
          "window_blocks",
          "Blocks mixed together by the shuffle; 0: from memory_budget; set, it overrides "
          "memory_budget for the decoded blocks: two windows of it stay resident",
          [](auto& o) -> auto& { return o.window_blocks; })
          .affects_order(),
      option<O>(
          "memory_budget",
          "Bytes of decoded blocks and batches in flight; window_blocks, when set, overrides it "
          "for the blocks (two windows of that many blocks stay resident, whatever the budget)",
          [](auto& o) -> auto& { return o.memory_budget; })
          .at_least(1 << 16)
          .defaults_to("512 MiB")
          .affects_order(),
  };
}

// Budgets per epoch and what a damaged block does: they end or change the epoch's stream.
std::vector<Option<O>> budget_options() {
  return {
      option<O>(
          "max_samples",
          "Samples per epoch, all ranks (a budget; a weighted mixture's length); 0: all",
          [](auto& o) -> auto& { return o.max_samples; })
          .affects_order(),
      option<O>(
          "max_tokens",
          "Tokens per epoch, all ranks: the epoch ends at the sample whose tokens (each row's "
          "length, in the epoch's order) reach it, at every world size and batch size; 0: none",
          [](auto& o) -> auto& { return o.max_tokens; })
          .affects_order(),
      options::choice_option<O>(
          "on_corrupt",
          "A block that fails its checksum (after a remote block's one refetch): fail, or skip "
          "(its records replaced by the next intact block of its window, the same on every rank)",
          [](auto& o) -> auto& { return o.on_corrupt; },
          options::named(on_corrupt_name, {OnCorrupt::kFail, OnCorrupt::kSkip}))
          .affects_order(),
  };
}

std::vector<Option<O>> resource_options() {
  return {
      option<O>(
          "threads",
          "Threads that build batches; 0: the cores this process may use (its CPU affinity, "
          "within its cgroup's CPU limit), shared among the ranks of this node (ranks_per_node, "
          "else LOCAL_WORLD_SIZE)",
          [](auto& o) -> auto& { return o.threads; })
          .range(0, 1024)
          .defaults_to("0 (the process's cores / ranks on the node)"),
      option<O>(
          "prefetch_batches",
          "Batches built ahead; 0: 2 per thread; at most what a quarter of memory_budget holds "
          "less one per thread, and 1 where that leaves none",
          [](auto& o) -> auto& { return o.prefetch_batches; }),
      computed_option<O>(
          "timeout_ms", Kind::kUInt,
          "How long next() waits for a batch, in milliseconds; 0: no limit",
          [](const O& o) -> Value { return uint64_t(o.timeout.count()); },
          [](O& o, const Value& v) {
            o.timeout = std::chrono::milliseconds(int64_t(std::get<uint64_t>(v)));
          })
          .range(0, 1e12),
  };
}

std::vector<Option<O>> batch_options() {
  return {
      option<O>(
          "fields",
          "Stored fields to return; empty: every field a model takes, under HF "
          "names (model(**batch) works)",
          [](auto& o) -> auto& { return o.fields; }),
      option<O>(
          "include_metadata",
          "Also return length, a first_segment_length field, and QA's example_index and "
          "source_index",
          [](auto& o) -> auto& { return o.include_metadata; }),
      computed_option<O>(
          "int32", Kind::kBool, "Integer fields as int32 instead of int64 (HF's type)",
          [](const O& o) -> Value { return o.int_output == IntOutput::kInt32; },
          [](O& o, const Value& v) {
            o.int_output = std::get<bool>(v) ? IntOutput::kInt32 : IntOutput::kInt64;
          }),
      option<O>(
          "dynamic_padding", "Trim sequence fields to the longest row of the batch",
          [](auto& o) -> auto& { return o.dynamic_padding; }),
      option<O>(
          "pad_to_multiple_of", "Round the trimmed length up to a multiple (8: tensor cores)",
          [](auto& o) -> auto& { return o.pad_to_multiple_of; })
          .at_least(1),
      option<O>(
          "attention_mask", "Derive attention_mask from each row's length",
          [](auto& o) -> auto& { return o.attention_mask; }),
      option<O>(
          "source_field", "Add `source`: the index of the source each row came from",
          [](auto& o) -> auto& { return o.source_field; }),
      option<O>(
          "sft_labels",
          "sft: labels from the ids and the stored loss mask (-100 where not trained)",
          [](auto& o) -> auto& { return o.sft_labels; }),
  };
}

std::vector<Option<O>> mlm_options() {
  return {
      computed_option<O>(
          "mlm_probability", Kind::kReal,
          "Turns on MLM masking: the share of real tokens selected (labels become -100 where not "
          "selected)",
          [](const O& o) -> Value { return o.mlm.enabled ? Value(o.mlm.probability) : Value{}; },
          [](O& o, const Value& v) {
            o.mlm.enabled = std::holds_alternative<double>(v);
            if (o.mlm.enabled) o.mlm.probability = std::get<double>(v);
          })
          .range(0, 1),
      option<O>(
          "mask_token_id", "MLM: the [MASK] id; unset: the dataset's tokenizer's",
          [](auto& o) -> auto& { return o.mlm.mask_token_id; })
          .defaults_to("the dataset's [MASK]"),
      option<O>(
          "vocab_size", "MLM: random replacements are drawn below it; 0: the tokenizer's",
          [](auto& o) -> auto& { return o.mlm.vocab_size; }),
      option<O>(
          "special_ids", "MLM: ids never selected; empty: the tokenizer's special ids",
          [](auto& o) -> auto& { return o.mlm.special_ids; }),
  };
}

std::vector<Option<O>> document_options() {
  return {
      option<O>(
          "document_positions", "Packed rows: position_ids restarting at each document",
          [](auto& o) -> auto& { return o.documents.position_ids; }),
      option<O>(
          "cu_seqlens",
          "Packed rows: int32 cu_seqlens over the unpadded tokens plus max_seqlen, for "
          "flash_attn_varlen_func",
          [](auto& o) -> auto& { return o.documents.cu_seqlens; }),
      option<O>(
          "document_mask",
          "Packed rows: attention_mask [B, 1, T, T], causal within each document, for "
          "scaled_dot_product_attention",
          [](auto& o) -> auto& { return o.documents.attention_mask; }),
      option<O>(
          "max_mask_length", "The longest row a [B, 1, T, T] document mask is built for",
          [](auto& o) -> auto& { return o.documents.max_mask_length; })
          .at_least(1),
      option<O>(
          "separator_id", "Packed rows: the id that ends each document; unset: the dataset's",
          [](auto& o) -> auto& { return o.documents.separator_id; }),
  };
}

std::vector<Option<O>> all_options() {
  std::vector<Option<O>> all;
  for (auto* group : {&order_options, &budget_options, &resource_options, &batch_options,
                      &mlm_options, &document_options})
    for (Option<O>& o : (*group)()) all.push_back(std::move(o));
  return all;
}

}  // namespace

const options::OptionTable<LoaderOptions>& loader_option_table() {
  static const options::OptionTable<LoaderOptions> table =
      options::OptionTable<LoaderOptions>(all_options())
          .with(
              source_option_table(), [](auto& o) -> auto& { return o.source; });
  return table;
}

}  // namespace shardkit::loader
