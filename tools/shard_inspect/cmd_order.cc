// shard-inspect order DIR [--epoch E] [--start K] [--count N] [every loader option that changes
//   the order, from the loader's option table: --seed S --rank R --world-size W --batch-size B
//   --no-shuffle --drop-last --max-tokens T ...]
// shard-inspect order --mixture SPEC.json [same options] [--shares STEPS]
// shard-inspect order (DIR | --mixture SPEC.json) --resume-from STATE.json --world-size W
//   --batch-size B [--max-tokens T] [same options]
// Prints, one per line, the global record indices a Loader with the same options yields to
// this rank (for a mixture, "SOURCE RECORD": the source's index in the spec and the record in
// it): the same EpochPlan code, no data read (but the rows' lengths with --max-tokens; and with
// --on-corrupt skip, whose replacements of damaged blocks only reading tells, a Loader reads the
// data and its batches' records are printed). --shares
// prints instead, per window of STEPS global steps, each source's count and share beside what its
// weights or schedule give.
// --blocks prints instead which blocks each node reads in each window (partition, --world-size,
// --ranks-per-node), and each node's share of the dataset.
// --resume-from prints what every rank of a run resumed from a saved state_dict (JSON) at this
// world size and batch size reads: "RANK BATCH [SOURCE] RECORD" lines after "#" lines (--start
// and --count per rank; a state at its epoch's end reads the next epoch from its start, as the
// resumed Loader's next pass does); with --max-tokens it reads the rows' lengths to find where the
// budget ends the epoch, and with --on-corrupt skip each rank's Loader, resumed from the state,
// reads the data.
#include <simdjson.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>

#include "core/dataset.h"
#include "core/dataset_store.h"
#include "core/error.h"
#include "core/json_keys.h"
#include "core/manifest.h"
#include "count_check.h"
#include "loader/collator.h"
#include "loader/fingerprint.h"
#include "loader/loader.h"
#include "loader/loader_option_table.h"
#include "loader/mixture_spec.h"
#include "loader/plan.h"
#include "option_flags.h"
#include "shard_inspect/commands.h"
#include "shard_inspect/source_flags.h"
#include "shard_inspect/stream_sources.h"

namespace {

namespace loader = shardkit::loader;
using shardkit::Error;
using shardkit::ErrorCode;

struct OrderArgs {
  std::string dir;
  std::string mixture;
  std::string resume_from;
  bool seed_given = false;
  loader::LoaderOptions options;
  std::unique_ptr<shardkit::tools::OptionFlags<loader::LoaderOptions>> flags;
  uint64_t epoch = 0;
  uint64_t start = 0;
  uint64_t count = UINT64_MAX;
  uint64_t shares = 0;
  bool blocks = false;
  bool epoch_given = false, range_given = false;  // --epoch; --start or --count
  bool print_options = false;
};

using Sources = shard_inspect::StreamSources;

std::string row_text(const loader::PlannedRows& rows, size_t row, bool mixed) {
  return (mixed ? std::to_string(rows.sources[row]) + " " : std::string()) +
         std::to_string(rows.records[row]);
}

void flush_if_large(std::string& out) {
  if (out.size() < (1 << 16)) return;
  std::fputs(out.c_str(), stdout);
  out.clear();
}

uint64_t budget_end(const Sources& s, loader::LoaderOptions options, uint64_t epoch, uint64_t start,
                    uint64_t before);

// This rank's records from its `start`-th sample on, at most `count`.
void print_rank(const Sources& s, const loader::LoaderOptions& options, const OrderArgs& args) {
  const uint64_t end =
      options.max_tokens ? budget_end(s, options, args.epoch, 0, 0) : s.stream->size();
  const loader::EpochPlan plan(s.stream, s.shapes, options, args.epoch, 0, options.max_tokens > 0,
                               end);
  // Every batch but the last is full, so the batch holding row `start` is found by division.
  uint64_t batch = args.start / options.batch_size, row = args.start % options.batch_size;
  uint64_t printed = 0;
  std::string out;
  for (; batch < plan.batches() && printed < args.count; ++batch, row = 0) {
    const loader::PlannedRows rows = plan.rows(batch);
    for (; row < rows.size() && printed < args.count; ++row, ++printed)
      out += row_text(rows, row, s.mixed) + "\n";
    flush_if_large(out);
  }
  std::fputs(out.c_str(), stdout);
}

// With --on-corrupt skip a damaged block's rows read the next intact block of its window: what
// a loader yields depends on which blocks are damaged, so a loader reads them.
void print_rank_as_read(const Sources& s, loader::LoaderOptions options, const OrderArgs& args) {
  loader::Loader l(s.sources, options);
  l.set_epoch(args.epoch);
  uint64_t row = 0, printed = 0;
  std::string out;
  while (printed < args.count) {
    const std::shared_ptr<loader::Batch> b = l.next();
    if (!b) break;
    for (size_t r = 0; r < b->records.size() && printed < args.count; ++r, ++row) {
      if (row < args.start) continue;
      out += (s.mixed ? std::to_string(b->sources[r]) + " " : std::string()) +
             std::to_string(b->records[r]) + "\n";
      ++printed;
    }
    flush_if_large(out);
  }
  std::fputs(out.c_str(), stdout);
}

// Per window of `steps` global steps: each source's count and share, and its weights' or
// schedule's share of the same samples.
void print_shares(const Sources& s, const loader::LoaderOptions& options, uint64_t steps) {
  const loader::MixtureSchedule* schedule = s.stream->schedule();
  const uint64_t global = options.batch_size * options.world_size, n = s.stream->size();
  const uint64_t window = steps * global;
  std::string out;
  for (uint64_t first = 0; first < n; first += window) {
    const uint64_t end = std::min(n, first + window);
    const std::vector<uint64_t> a = s.stream->counts_before(first),
                                b = s.stream->counts_before(end);
    std::string counts, shares, expected;
    for (size_t i = 0; i < a.size(); ++i) {
      char buf[64];
      counts += " " + std::to_string(b[i] - a[i]);
      std::snprintf(buf, sizeof buf, " %.4f", double(b[i] - a[i]) / double(end - first));
      shares += buf;
      const double want = schedule ? schedule->integral(i, end) - schedule->integral(i, first)
                                   : double(end - first);
      std::snprintf(buf, sizeof buf, " %.4f", want / double(end - first));
      expected += buf;
    }
    out += "steps " + std::to_string(first / global) + "-" + std::to_string((end - 1) / global) +
           " samples " + std::to_string(first) + "-" + std::to_string(end - 1) + " counts" +
           counts + " shares" + shares + " schedule" + expected + "\n";
    flush_if_large(out);
  }
  std::fputs(out.c_str(), stdout);
}

uint64_t state_value(simdjson::dom::element v, const std::string& key, const std::string& file) {
  uint64_t u;
  if (v.get_uint64().get(u))
    throw Error(ErrorCode::kInput, file, "state \"" + key + "\" must be a non-negative integer");
  return u;
}

// A state's "skipped_blocks": [source, block] pairs.
std::vector<std::pair<uint32_t, uint64_t>> state_blocks(simdjson::dom::element v,
                                                        const std::string& file) {
  const Error invalid(ErrorCode::kInput, file,
                      "state \"skipped_blocks\" must be a list of [source, block] pairs of "
                      "non-negative integers");
  simdjson::dom::array pairs;
  if (v.get_array().get(pairs)) throw invalid;
  std::vector<std::pair<uint32_t, uint64_t>> out;
  for (simdjson::dom::element pair : pairs) {
    simdjson::dom::array p;
    uint64_t source, block;
    if (pair.get_array().get(p) || p.size() != 2 || p.at(0).get_uint64().get(source) ||
        p.at(1).get_uint64().get(block) || source > UINT32_MAX)
      throw invalid;
    out.emplace_back(static_cast<uint32_t>(source), block);
  }
  return out;
}

// A state_dict saved as JSON (json.dump(loader.state_dict(), f)).
loader::LoaderState read_state(const std::string& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw Error(ErrorCode::kIo, file, "cannot open the saved state");
  std::ostringstream text;
  text << in.rdbuf();
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  simdjson::dom::object o;
  if (parser.parse(text.str()).get(root) || root.get_object().get(o))
    throw Error(ErrorCode::kInput, file, "a saved state is a JSON object (a state_dict)");
  if (auto key = shardkit::repeated_key(root))
    throw Error(ErrorCode::kInput, file, "key \"" + *key + "\" appears twice");
  loader::LoaderState st;
  const std::pair<const char*, uint64_t*> numbers[] = {{"seed", &st.seed},
                                                       {"epoch", &st.epoch},
                                                       {"samples_consumed", &st.samples_consumed},
                                                       {"tokens_consumed", &st.tokens_consumed},
                                                       {"blocks_skipped", &st.blocks_skipped}};
  for (auto [k, v] : o) {
    const std::string key(k);
    std::string_view fp;
    bool known = key == "fingerprint" && !v.get_string().get(fp);
    if (known) st.fingerprint = std::string(fp);
    if (key == "skipped_blocks") st.skipped_blocks = state_blocks(v, file), known = true;
    for (const auto& [name, field] : numbers)
      if (key == name) *field = state_value(v, key, file), known = true;
    if (!known) throw Error(ErrorCode::kInput, file, "unknown state key \"" + key + "\"");
  }
  if (o["samples_consumed"].error())
    throw Error(ErrorCode::kInput, file, "the state has no \"samples_consumed\"");
  return st;
}

// max_tokens: the position after the one whose tokens reach the budget, reading each row's
// length from `start` on (`before` tokens counted already); the epoch's end when none does.
uint64_t budget_end(const Sources& s, loader::LoaderOptions options, uint64_t epoch, uint64_t start,
                    uint64_t before) {
  std::vector<shardkit::Dataset> data;
  std::vector<const shardkit::Field*> length;
  for (size_t i = 0; i < s.sources.size(); ++i) {
    data.push_back(shardkit::Dataset::open(s.sources[i].path, shard_inspect::dataset_options()));
    const std::string* name = data.back().info().field(shardkit::FieldRole::kLength);
    length.push_back(name ? data.back().schema().find(*name) : nullptr);
    if (!length.back())
      throw Error(ErrorCode::kInvalidArgument, s.sources[i].path,
                  "--max-tokens counts each row's length, but the dataset has no length field");
  }
  options.rank = 0, options.world_size = 1, options.batch_size = 4096, options.drop_last = false;
  const loader::EpochPlan plan(s.stream, s.shapes, options, epoch, start);
  uint64_t at = start;
  for (uint64_t b = 0; b < plan.batches(); ++b) {
    const loader::PlannedRows rows = plan.rows(b);
    std::vector<uint64_t> lengths;
    for (size_t r = 0; r < rows.size(); ++r) {
      const shardkit::Dataset& ds = data[rows.sources[r]];
      std::vector<unsigned char> record(ds.schema().record_size());
      ds.read(rows.records[r], record.data());
      int64_t v = 0;
      const shardkit::Field* f = length[rows.sources[r]];
      loader::cast_elements(f->dtype, record.data() + f->offset, shardkit::DType::kI64, &v, 1);
      lengths.push_back(static_cast<uint64_t>(std::max<int64_t>(v, 0)));
    }
    const size_t kept = loader::positions_within_budget(lengths, before, options.max_tokens);
    for (size_t i = 0; i < kept; ++i) before += lengths[i];
    if (before >= options.max_tokens) return at + kept;
    at += lengths.size();
  }
  return s.stream->size();
}

// --start and --count apply to each rank's samples from the resumed position on.
struct ResumedRows {
  const OrderArgs& args;
  const Sources& s;
  std::string& out;
  uint32_t rank;
  uint64_t seen = 0, printed = 0;

  bool full() const { return printed >= args.count; }
  void add(uint64_t batch, uint32_t source, uint64_t record) {
    if (full() || seen++ < args.start) return;
    out += std::to_string(rank) + " " + std::to_string(batch) + " " +
           (s.mixed ? std::to_string(source) + " " : std::string()) + std::to_string(record) + "\n";
    ++printed;
  }
};

// A rank's rows of a run resumed from `st`, from the plan alone.
void add_planned_resumed_rows(const Sources& s, const loader::LoaderOptions& options,
                              const loader::LoaderState& st, uint64_t end, ResumedRows& rows) {
  const loader::EpochPlan plan(s.stream, s.shapes, options, st.epoch, st.samples_consumed,
                               options.max_tokens > 0, end);
  for (uint64_t b = 0; b < plan.batches() && !rows.full(); ++b) {
    const loader::PlannedRows planned = plan.rows(b);
    for (size_t row = 0; row < planned.size() && !rows.full(); ++row)
      rows.add(b, planned.sources[row], planned.records[row]);
    flush_if_large(rows.out);
  }
}

// With --on-corrupt skip a damaged block's rows read its substitute, which only reading tells: a
// rank's rows as a Loader resumed from `st` yields them.
void add_read_resumed_rows(const Sources& s, const loader::LoaderOptions& options,
                           const loader::LoaderState& st, ResumedRows& rows) {
  loader::Loader l(s.sources, options);
  l.restore(st);
  while (!rows.full()) {
    const std::shared_ptr<loader::Batch> b = l.next();
    if (!b) break;
    for (size_t r = 0; r < b->records.size() && !rows.full(); ++r)
      rows.add(b->index, b->sources[r], b->records[r]);
    flush_if_large(rows.out);
  }
}

// max_tokens with --on-corrupt skip: where the budget ends the epoch, counting the lengths of
// the rows a Loader reads (a damaged block's substitute's): one rank reading one position a
// step yields exactly the positions up to there.
uint64_t budget_end_as_read(const Sources& s, loader::LoaderOptions options,
                            const loader::LoaderState& st) {
  options.rank = 0, options.world_size = 1, options.ranks_per_node = 1, options.batch_size = 1;
  options.drop_last = false;
  loader::Loader l(s.sources, options);
  l.restore(st);
  uint64_t end = st.samples_consumed;
  while (const std::shared_ptr<loader::Batch> b = l.next()) end += b->records.size();
  return end;
}

// Where the epoch a run resumed from `st` reads ends: the epoch's last sample, or with max_tokens
// where the budget ends it.
uint64_t resumed_end(const Sources& s, const loader::LoaderOptions& options,
                     const loader::LoaderState& st) {
  if (!options.max_tokens) return s.stream->size();
  if (st.tokens_consumed >= options.max_tokens) return st.samples_consumed;
  if (options.on_corrupt == loader::OnCorrupt::kSkip) return budget_end_as_read(s, options, st);
  return budget_end(s, options, st.epoch, st.samples_consumed, st.tokens_consumed);
}

// Whether the ranks have batches left of the state's epoch (they all have the same count: a
// last short step is padded, or dropped for all with drop_last).
bool batches_left(const Sources& s, loader::LoaderOptions options, const loader::LoaderState& st,
                  uint64_t end) {
  options.rank = 0;
  return loader::EpochPlan(s.stream, s.shapes, options, st.epoch, st.samples_consumed,
                           options.max_tokens > 0, end)
             .batches() > 0;
}

// A state at its epoch's end resumes, as Loader's next pass does, with the next epoch's start.
loader::LoaderState next_epoch_start(const loader::LoaderState& st) {
  if (st.epoch == UINT64_MAX)
    throw Error(ErrorCode::kInvalidArgument, "",
                "epoch " + std::to_string(st.epoch) + " was the last one: epochs are 64-bit");
  loader::LoaderState next;
  next.seed = st.seed;
  next.epoch = st.epoch + 1;
  next.fingerprint = st.fingerprint;
  return next;
}

// What each rank of a run resumed from `state` at this world size and batch size reads.
void print_resume(const Sources& s, loader::LoaderOptions options, const OrderArgs& args) {
  loader::LoaderState st = read_state(args.resume_from);
  if (!args.seed_given) options.seed = st.seed;
  std::vector<const shardkit::Manifest*> manifests;
  for (const shardkit::Manifest& m : s.manifests) manifests.push_back(&m);
  loader::check_resumable(st.fingerprint, st.seed,
                          loader::stream_fingerprints(manifests, s.sources, options), options.seed,
                          s.mixed ? args.mixture : args.dir);
  const uint64_t n = s.stream->size();
  if (st.samples_consumed > n)
    throw Error(ErrorCode::kInvalidArgument, args.resume_from,
                "samples_consumed " + std::to_string(st.samples_consumed) +
                    " is past the epoch's end: the valid range is 0.." + std::to_string(n));
  const bool read = options.on_corrupt == loader::OnCorrupt::kSkip;
  uint64_t end = resumed_end(s, options, st);
  std::string out;
  if (!batches_left(s, options, st, end)) {
    out = "# epoch " + std::to_string(st.epoch) + " has nothing left at samples_consumed " +
          std::to_string(st.samples_consumed) +
          ": the resumed run's next pass reads the next epoch from its start\n";
    st = next_epoch_start(st);
    end = resumed_end(s, options, st);
  }
  const uint64_t global = options.batch_size * options.world_size;
  out += "# epoch " + std::to_string(st.epoch) + ", seed " + std::to_string(options.seed) +
         ": samples " + std::to_string(st.samples_consumed) + ".." + std::to_string(end) + " of " +
         std::to_string(n) + " left, " + std::to_string(options.world_size) + " ranks x " +
         std::to_string(options.batch_size) + " = " + std::to_string(global) + " a step\n";
  for (uint32_t r = 0; r < options.world_size; ++r) {
    options.rank = r;
    ResumedRows rows{args, s, out, r};
    if (read)
      add_read_resumed_rows(s, options, st, rows);
    else
      add_planned_resumed_rows(s, options, st, end, rows);
  }
  std::fputs(out.c_str(), stdout);
}

// Which blocks each node (and each of its ranks) reads in each window of the epoch, from every
// rank's planned rows: "NODE WINDOW BLOCK..." lines, then each node's share.
void print_blocks(const Sources& s, loader::LoaderOptions options, const OrderArgs& args) {
  if (s.mixed) throw Error(ErrorCode::kInvalidArgument, "", "--blocks takes one dataset DIR");
  const shardkit::Geometry& geo = s.shapes[0].geometry;
  const uint32_t world = options.world_size, per_node = options.ranks_per_node;
  std::vector<std::map<uint64_t, std::set<uint64_t>>> by_node;  // node -> window -> blocks
  std::vector<std::set<uint64_t>> by_rank(world);
  std::string groups;
  for (uint32_t r = 0; r < world; ++r) {
    options.rank = r;
    const loader::EpochPlan plan(s.stream, s.shapes, options, args.epoch, 0);
    const loader::ReadingGroups& g = plan.reading();
    by_node.resize(g.nodes);
    groups = std::to_string(g.nodes) + " nodes x " + std::to_string(g.ranks_per_node) + " ranks, " +
             std::to_string(g.groups) + " reading groups";
    for (uint64_t b = 0; b < plan.batches(); ++b) {
      const loader::PlannedRows rows = plan.rows(b);
      for (size_t i = 0; i < rows.size(); ++i) {
        const uint64_t block = geo.block_of_record(rows.records[i]);
        by_node[r / g.ranks_per_node][rows.windows[i]].insert(block);
        by_rank[r].insert(block);
      }
    }
  }
  const std::string plan =
      options.partition == loader::Partition::kNodes
          ? "partition='nodes' over " + std::to_string(options.partitions) + " partitions"
          : "partition='rows'";
  std::string out = "# " + plan + ", " + groups + ", epoch " + std::to_string(args.epoch) +
                    ": NODE WINDOW BLOCK... per line\n";
  for (size_t n = 0; n < by_node.size(); ++n) {
    std::set<uint64_t> all;
    for (const auto& [window, blocks] : by_node[n]) {
      out += std::to_string(n) + " " + std::to_string(window);
      for (uint64_t b : blocks) out += " " + std::to_string(b);
      out += "\n";
      all.insert(blocks.begin(), blocks.end());
      flush_if_large(out);
    }
    char share[32];
    std::snprintf(share, sizeof share, "%.1f%%", 100.0 * double(all.size()) / double(geo.blocks()));
    out += "# node " + std::to_string(n) + " reads " + std::to_string(all.size()) + " of " +
           std::to_string(geo.blocks()) + " blocks (" + share + "):";
    for (uint32_t r = uint32_t(n) * per_node; r < (n + 1) * per_node && r < world; ++r)
      out += " rank " + std::to_string(r) + " " + std::to_string(by_rank[r].size());
    out += "\n";
  }
  std::fputs(out.c_str(), stdout);
}

// Flags the chosen output would silently ignore are refused instead.
void check_combination(const OrderArgs& args) {
  auto refuse = [](const std::string& why) { throw Error(ErrorCode::kInvalidArgument, "", why); };
  const bool resume = !args.resume_from.empty(), shares = args.shares > 0;
  if (int(resume) + int(args.blocks) + int(shares) > 1)
    refuse("--resume-from, --blocks and --shares each print another view: give one");
  if (resume && args.epoch_given)
    refuse("--resume-from continues the saved state's epoch: --epoch does not apply");
  if (args.blocks && args.range_given)
    refuse(
        "--blocks shows each node's blocks over the whole epoch: --start and --count do not "
        "apply");
  if (shares && args.range_given)
    refuse("--shares counts the whole epoch's samples: --start and --count do not apply");
}

void run_order(OrderArgs& args) {
  loader::LoaderOptions options = args.options;
  // The rank the command shows is the one asked for, never the environment's.
  options.rank = 0;
  options.world_size = 1;
  args.flags->apply(options);
  options.source = shard_inspect::source_options();
  args.seed_given = args.flags->given("seed");
  // One node unless asked: the command never reads LOCAL_WORLD_SIZE either.
  if (!args.flags->given("ranks_per_node")) options.ranks_per_node = options.world_size;
  if (args.print_options) {
    std::printf("%s\n", loader::loader_option_table().to_json(options).c_str());
    return;
  }
  check_combination(args);
  const Sources s =
      shard_inspect::load_stream_sources(args.dir, args.mixture, options, args.seed_given);
  if (!args.resume_from.empty()) return print_resume(s, options, args);
  if (args.blocks) return print_blocks(s, options, args);
  if (args.shares) {
    if (!s.mixed) throw Error(ErrorCode::kInvalidArgument, "", "--shares needs --mixture");
    return print_shares(s, options, args.shares);
  }
  if (options.on_corrupt == loader::OnCorrupt::kSkip) return print_rank_as_read(s, options, args);
  print_rank(s, options, args);
}

const shard_inspect::RegisterCommand kOrder([](CLI::App& app) {
  auto args = std::make_shared<OrderArgs>();
  CLI::App* cmd = app.add_subcommand(
      "order", "Print the global record indices a loader with these options yields, one per line");
  cmd->add_option("dir", args->dir, "Dataset directory or URL (http://, https://, s3://)");
  cmd->add_option("--mixture", args->mixture,
                  "A mixture spec (JSON: sources with path and weight/repeat/choose, or a "
                  "schedule; seed, max_samples); prints SOURCE RECORD per line");
  // Counts and indices: a negative one would wrap to a huge one.
  cmd->add_option("--epoch", args->epoch, "Epoch")->default_val(0)->check(shardkit::tools::kCount);
  cmd->add_option("--start", args->start, "Skip this many of the rank's samples first")
      ->default_val(0)
      ->check(shardkit::tools::kCount);
  cmd->add_option("--count", args->count, "Print at most this many")
      ->check(shardkit::tools::kCount);
  args->flags = std::make_unique<shardkit::tools::OptionFlags<loader::LoaderOptions>>(
      cmd, loader::loader_option_table(), [](const auto& option) { return option.order; });
  cmd->add_option("--shares", args->shares,
                  "With --mixture: print each source's share per window of this many steps")
      ->default_val(0)
      ->check(shardkit::tools::kCount);
  cmd->add_option("--resume-from", args->resume_from,
                  "A saved state_dict (JSON): print what each rank of a run resumed from it at "
                  "--world-size and --batch-size reads, as RANK BATCH [SOURCE] RECORD");
  cmd->add_flag("--blocks", args->blocks,
                "Print which blocks each node reads in each window (NODE WINDOW BLOCK... lines), "
                "and each node's and rank's share, for --world-size and --ranks-per-node");
  cmd->add_flag("--print-options", args->print_options,
                "Print the loader options as resolved (JSON), and exit");
  const auto apply_source_flags = shard_inspect::add_source_flags(cmd);
  cmd->callback([args, apply_source_flags, cmd] {
    apply_source_flags();
    args->epoch_given = cmd->count("--epoch") > 0;
    args->range_given = cmd->count("--start") + cmd->count("--count") > 0;
    run_order(*args);
  });
});

}  // namespace
