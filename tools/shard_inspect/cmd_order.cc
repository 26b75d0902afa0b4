// shard-inspect order DIR --seed S --epoch E --rank R --world-size W [--batch-size B]
//   [--start K] [--count N] [--no-shuffle] [--drop-last] [--window-blocks K] [--memory-budget B]
//   [--max-samples N]
// shard-inspect order --mixture SPEC.json [same options]
// Prints, one per line, the global record indices a Loader with the same options yields to
// this rank (for a mixture, "SOURCE RECORD": the source's index in the spec and the record in
// it): the same EpochPlan code, no data read.
#include <cstdio>
#include <memory>
#include <string>

#include "loader/plan.h"
#include "shard_inspect/commands.h"
#include "shard_inspect/stream_sources.h"

namespace {

struct OrderArgs {
  std::string dir;
  std::string mixture;
  bool seed_given = false;
  shardkit::loader::LoaderOptions options;
  uint64_t epoch = 0;
  uint64_t start = 0;
  uint64_t count = UINT64_MAX;
  bool no_shuffle = false;
};

void run_order(const OrderArgs& args) {
  namespace loader = shardkit::loader;
  loader::LoaderOptions options = args.options;
  options.shuffle = !args.no_shuffle;
  const shard_inspect::StreamSources sources =
      shard_inspect::load_stream_sources(args.dir, args.mixture, options, args.seed_given);
  const bool mixed = sources.mixed;
  const loader::EpochPlan plan(sources.stream(options.max_samples), sources.shapes, options,
                               args.epoch, 0);
  // Every batch but the last is full, so the batch holding row `start` is found by division.
  const uint64_t full = options.batch_size;
  uint64_t batch = args.start / full;
  uint64_t row = args.start % full;
  uint64_t printed = 0;
  std::string out;
  while (batch < plan.batches() && printed < args.count) {
    const loader::PlannedRows rows = plan.rows(batch);
    for (; row < rows.size() && printed < args.count; ++row, ++printed)
      out += (mixed ? std::to_string(rows.sources[row]) + " " : std::string()) +
             std::to_string(rows.records[row]) + "\n";
    if (out.size() > (1 << 16)) {
      std::fputs(out.c_str(), stdout);
      out.clear();
    }
    ++batch;
    row = 0;
  }
  std::fputs(out.c_str(), stdout);
}

const shard_inspect::RegisterCommand kOrder([](CLI::App& app) {
  auto args = std::make_shared<OrderArgs>();
  CLI::App* cmd = app.add_subcommand(
      "order", "Print the global record indices a loader with these options yields, one per line");
  cmd->add_option("dir", args->dir, "Dataset directory or URL (http://, https://, s3://)");
  cmd->add_option("--mixture", args->mixture,
                  "A mixture spec (JSON: sources with path and weight/repeat/choose, seed, "
                  "max_samples); prints SOURCE RECORD per line");
  auto* seed = cmd->add_option("--seed", args->options.seed, "Shuffle seed (overrides the spec's)")
                   ->default_val(0);
  cmd->add_option("--epoch", args->epoch, "Epoch")->default_val(0);
  cmd->add_option("--rank", args->options.rank, "This process's rank")->default_val(0);
  cmd->add_option("--world-size", args->options.world_size, "Number of ranks")->default_val(1);
  cmd->add_option("--batch-size", args->options.batch_size, "Per-rank batch size")
      ->default_val(args->options.batch_size);
  cmd->add_option("--start", args->start, "Skip this many of the rank's samples first")
      ->default_val(0);
  cmd->add_option("--count", args->count, "Print at most this many");
  cmd->add_flag("--no-shuffle", args->no_shuffle, "Sequential order (evaluation)");
  cmd->add_flag("--drop-last", args->options.drop_last, "Drop the last short global batch");
  cmd->add_option("--window-blocks", args->options.window_blocks,
                  "Shuffle window in blocks (0: derived from --memory-budget)")
      ->default_val(0);
  cmd->add_option("--memory-budget", args->options.memory_budget, "Loader memory budget, bytes")
      ->default_val(args->options.memory_budget);
  cmd->add_option("--max-samples", args->options.max_samples,
                  "Samples per epoch (a budget; a weighted mixture's length)")
      ->default_val(0);
  cmd->callback([args, seed] {
    args->seed_given = seed->count() > 0;
    run_order(*args);
  });
});

}  // namespace
