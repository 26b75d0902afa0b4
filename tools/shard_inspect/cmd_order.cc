// shard-inspect order DIR [--epoch E] [--start K] [--count N] [every loader option that changes
//   the order: --seed S --rank R --world-size W --batch-size B --no-shuffle ...]
// shard-inspect order --mixture SPEC.json [same options]
// Prints, one per line, the global record indices a Loader with the same options yields to
// this rank (for a mixture, "SOURCE RECORD": the source's index in the spec and the record in
// it): the same EpochPlan code, no data read.
#include <cstdio>
#include <memory>
#include <string>

#include "core/dataset_store.h"
#include "core/error.h"
#include "core/manifest.h"
#include "loader/loader.h"
#include "loader/loader_option_table.h"
#include "loader/mixture_spec.h"
#include "loader/plan.h"
#include "option_flags.h"
#include "shard_inspect/commands.h"

namespace {

struct OrderArgs {
  std::string dir;
  std::string mixture;
  shardkit::loader::LoaderOptions options;
  std::unique_ptr<shardkit::tools::OptionFlags<shardkit::loader::LoaderOptions>> flags;
  uint64_t epoch = 0;
  uint64_t start = 0;
  uint64_t count = UINT64_MAX;
  bool print_options = false;
};

// The command's sources: the dataset, or the mixture spec's (whose seed and max_samples apply
// unless given as flags).
std::vector<shardkit::loader::MixtureSource> order_sources(
    const OrderArgs& args, shardkit::loader::LoaderOptions& options) {
  namespace loader = shardkit::loader;
  if (args.dir.empty() == args.mixture.empty())
    throw shardkit::Error(shardkit::ErrorCode::kInvalidArgument, "",
                          "order takes a dataset DIR or --mixture SPEC.json, not both");
  if (args.mixture.empty()) return {{args.dir, {}, {}, {}}};
  const loader::MixtureSpec spec = loader::read_mixture_spec(args.mixture);
  if (spec.seed && !args.flags->given("seed")) options.seed = *spec.seed;
  if (spec.max_samples && !options.max_samples) options.max_samples = *spec.max_samples;
  return spec.sources;
}

// Prints rows [start, start + count) of this rank, handed to add() in order from row `first`.
class RowPrinter {
 public:
  RowPrinter(const OrderArgs& args, uint64_t first)
      : args_(args), mixed_(!args.mixture.empty()), seen_(first) {}
  bool done() const { return printed_ >= args_.count; }
  void add(uint32_t source, uint64_t record) {
    if (seen_++ < args_.start || done()) return;
    out_ += (mixed_ ? std::to_string(source) + " " : std::string()) + std::to_string(record) + "\n";
    ++printed_;
    if (out_.size() > (1 << 16)) flush();
  }
  void flush() {
    std::fputs(out_.c_str(), stdout);
    out_.clear();
  }

 private:
  const OrderArgs& args_;
  bool mixed_;
  uint64_t seen_, printed_ = 0;
  std::string out_;
};

// From the plan alone: the same EpochPlan code as the loader, no data read.
void print_planned(const std::vector<shardkit::loader::MixtureSource>& sources,
                   const shardkit::loader::LoaderOptions& options, const OrderArgs& args) {
  namespace loader = shardkit::loader;
  std::vector<uint64_t> sizes;
  std::vector<loader::SourceShape> shapes;
  for (const loader::MixtureSource& s : sources) {
    const shardkit::Manifest m = shardkit::open_store(s.path)->load_manifest();
    shapes.push_back({shardkit::Geometry::of(m), m.schema.record_size()});
    sizes.push_back(shapes.back().geometry.records());
  }
  const loader::EpochPlan plan(
      std::make_shared<const loader::MixtureStream>(sources, sizes, options.max_samples), shapes,
      options, args.epoch, 0);
  // Every batch but the last is full, so the batch holding row `start` is found by division.
  const uint64_t first_batch = args.start / options.batch_size;
  RowPrinter printer(args, first_batch * options.batch_size);
  for (uint64_t batch = first_batch; batch < plan.batches() && !printer.done(); ++batch) {
    const loader::PlannedRows rows = plan.rows(batch);
    for (size_t row = 0; row < rows.size(); ++row)
      printer.add(rows.sources[row], rows.records[row]);
  }
  printer.flush();
}

// Through a Loader: the rows it delivers (it reads the lengths a token budget counts).
void print_loaded(const std::vector<shardkit::loader::MixtureSource>& sources,
                  const shardkit::loader::LoaderOptions& options, const OrderArgs& args) {
  shardkit::loader::Loader loader(sources, options);
  loader.set_epoch(args.epoch);
  RowPrinter printer(args, 0);
  while (!printer.done()) {
    const auto batch = loader.next();
    if (!batch) break;
    for (size_t row = 0; row < batch->records.size(); ++row)
      printer.add(batch->sources.empty() ? 0 : batch->sources[row], batch->records[row]);
  }
  printer.flush();
}

void run_order(OrderArgs& args) {
  namespace loader = shardkit::loader;
  loader::LoaderOptions options = args.options;
  // The rank the command shows is the one asked for, never the environment's.
  options.rank = 0;
  options.world_size = 1;
  args.flags->apply(options);
  if (args.print_options) {
    std::printf("%s\n", loader::loader_option_table().to_json(options).c_str());
    return;
  }
  const std::vector<loader::MixtureSource> sources = order_sources(args, options);
  // A token budget ends the epoch where the rows' lengths say: only reading them tells.
  if (options.max_tokens)
    print_loaded(sources, options, args);
  else
    print_planned(sources, options, args);
}

const shard_inspect::RegisterCommand kOrder([](CLI::App& app) {
  auto args = std::make_shared<OrderArgs>();
  CLI::App* cmd = app.add_subcommand(
      "order", "Print the global record indices a loader with these options yields, one per line");
  cmd->add_option("dir", args->dir, "Dataset directory or URL (http://, https://, s3://)");
  cmd->add_option("--mixture", args->mixture,
                  "A mixture spec (JSON: sources with path and weight/repeat/choose, seed, "
                  "max_samples); prints SOURCE RECORD per line");
  cmd->add_option("--epoch", args->epoch, "Epoch")->default_val(0);
  cmd->add_option("--start", args->start, "Skip this many of the rank's samples first")
      ->default_val(0);
  cmd->add_option("--count", args->count, "Print at most this many");
  args->flags = std::make_unique<shardkit::tools::OptionFlags<shardkit::loader::LoaderOptions>>(
      cmd, shardkit::loader::loader_option_table(),
      [](const auto& option) { return option.order; });
  cmd->add_flag("--print-options", args->print_options,
                "Print the loader options as resolved (JSON), and exit");
  cmd->callback([args] { run_order(*args); });
});

}  // namespace
