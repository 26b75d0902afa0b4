#include "loader/loader.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <future>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include "core/error.h"
#include "core/geometry.h"
#include "loader/collator.h"
#include "loader/damaged_blocks.h"
#include "loader/distributed_env.h"
#include "loader/fingerprint.h"
#include "loader/mlm.h"
#include "loader/plan.h"
#include "loader/source_layout.h"

namespace shardkit::loader {

namespace {

using BlockPtr = std::shared_ptr<const DecodedBlock>;

struct Built {
  std::shared_ptr<Batch> batch;
  std::exception_ptr error;
  std::vector<uint64_t> step_lengths;  // max_tokens: each position's tokens, in the step's order
  std::vector<std::pair<size_t, uint64_t>> replaced;  // damaged blocks (source, block) replaced
};

// A size as memory_budget would be given: "3 MiB", or "256 KiB" below a MiB; rounded up.
std::string size_text(size_t bytes) {
  if (bytes < (size_t{1} << 20)) return std::to_string((bytes + 1023) >> 10) + " KiB";
  return std::to_string((bytes + (size_t{1} << 20) - 1) >> 20) + " MiB";
}

}  // namespace

struct Loader::Impl {
  // One dataset of the loader, with its own block cache and windows.
  struct Source {
    Dataset ds;
    Geometry geo;
    std::optional<RowLayout> layout;  // how its rows read as source 0's; unset for source 0
    const Field* length = nullptr;    // for max_tokens
  };

  LoaderOptions opt;
  std::vector<Source> src;
  std::shared_ptr<const MixtureStream> stream;
  std::vector<SourceShape> shapes;
  std::optional<Collator> collator;
  size_t record_size = 0;  // of source 0, the layout batches are collated from
  unsigned thread_count = 1;
  size_t depth = 2;
  DType labels_dtype = DType::kI64;
  DType source_dtype = DType::kI64;
  std::shared_ptr<BufferPool> buffers;

  mutable std::mutex mu;
  std::condition_variable work_cv, ready_cv;
  bool stop = false;
  bool started = false;
  uint64_t generation = 0;
  std::shared_ptr<const EpochPlan> plan;
  uint64_t next_sched = 0;     // next batch a worker will take
  uint64_t consumer_next = 0;  // next batch next() returns
  uint64_t tokens_consumed = 0;
  // max_tokens ended this epoch: state() reports it over (samples_consumed = the epoch's size).
  bool budget_spent = false;
  // A batch failed: next() rethrows its error at it until a reset, so nothing past it is built.
  bool batch_failed = false;
  StreamFingerprints fingerprints;  // of this loader's sources and options
  DamagedBlocks damaged;
  std::set<uint64_t> in_flight;
  std::map<uint64_t, Built> ready;
  // Per source: the window of the lowest batch not yet built (its first sample of the source).
  std::vector<uint64_t> low_window;
  bool readahead_pending = false;  // the plan's first two windows are not asked for yet
  // Per source, the last window asked for ahead: no batch reaching past it is started before
  // it is, so a remote block is never read before it is asked for (which would fetch it twice).
  std::vector<uint64_t> readahead_upto;
  // The windows next_sched reaches, computed once per batch; cursors step the mixture forward.
  uint64_t upto_batch = UINT64_MAX;
  std::vector<uint64_t> upto;
  MixtureStream::Cursor upto_cursor, low_cursor;
  uint64_t batches_built = 0;
  std::vector<std::thread> workers;

  // Decoded blocks live in each dataset's BlockCache, pinned to the window that needs them and
  // released once every batch that reads that window is built. The caches' LRU budget is 0:
  // the window logic alone decides what stays resident.
  std::atomic<uint64_t> decoded{0};

  static std::vector<Source> open_sources(const std::vector<MixtureSource>& sources,
                                          const LoaderOptions& o) {
    if (sources.empty())
      throw Error(ErrorCode::kInvalidArgument, "", "a loader needs at least one source");
    SourceOptions so = o.source;
    // Remote bytes fetched ahead are held in memory until read: half the budget unless set.
    if (so.prefetch_bytes == 0)
      so.prefetch_bytes = std::max<size_t>(1, o.memory_budget / 2 / sources.size());
    // Decoded blocks' buffers come back for the next window's blocks: a window's worth (two fit
    // in 3/4 of the budget), so that the windows and the idle buffers stay within two windows.
    const size_t idle_blocks = o.memory_budget / 8 * 3 / sources.size();
    std::vector<Source> out;
    for (const MixtureSource& m : sources) {
      Dataset ds = Dataset::open(m.path, DatasetOptions{0, so, idle_blocks});
      Geometry geo = Geometry::of(ds.manifest());
      out.push_back(Source{std::move(ds), std::move(geo), std::nullopt, nullptr});
    }
    return out;
  }

  Impl(const std::vector<MixtureSource>& sources, LoaderOptions o)
      : opt(std::move(o)), src(open_sources(sources, opt)) {
    opt = with_dataset_defaults(std::move(opt), src[0].ds.info());
    const Dataset& first = src[0].ds;
    collator.emplace(first.schema(), first.info(), opt);
    record_size = first.schema().record_size();
    if (opt.partition == Partition::kNodes) check_node_numbering(opt);
    // Before ranks_per_node resolves to the world size, which may span many machines.
    thread_count = opt.threads ? opt.threads : default_thread_count(opt);
    opt.rank = effective_rank(opt);
    opt.world_size = effective_world_size(opt);
    opt.ranks_per_node = effective_ranks_per_node(opt);
    validate_mlm(opt.mlm);
    if (opt.mlm.enabled && !first.schema().find(opt.mlm.input_field))
      throw Error(ErrorCode::kInvalidArgument, first.path().string(),
                  "MLM input field '" + opt.mlm.input_field + "' is not in the dataset");
    if (opt.source_field && first.schema().find("source"))
      throw Error(ErrorCode::kInvalidArgument, first.path().string(),
                  "source_field writes 'source' but the dataset stores a field of that name");
    std::vector<uint64_t> sizes;
    for (size_t i = 0; i < src.size(); ++i) {
      if (i > 0) src[i].layout.emplace(first, src[i].ds, opt);
      if (opt.max_tokens) {
        src[i].length = src[i].ds.schema().find(opt.length_field);
        if (!src[i].length || !src[i].length->shape.empty() || src[i].length->dtype == DType::kF32)
          throw Error(ErrorCode::kInvalidArgument, src[i].ds.path().string(),
                      "max_tokens counts each row's length, but the dataset has no integer "
                      "length field ('" +
                          opt.length_field + "')");
      }
      sizes.push_back(src[i].geo.records());
      shapes.push_back(SourceShape{src[i].geo, src[i].ds.schema().record_size()});
    }
    stream = std::make_shared<const MixtureStream>(sources, sizes, opt.max_samples,
                                                   row_tokens(first.schema(), first.info()));
    std::vector<const Manifest*> manifests;
    for (const Source& s : src) manifests.push_back(&s.ds.manifest());
    fingerprints = stream_fingerprints(manifests, sources, opt);
    labels_dtype = opt.int_output == IntOutput::kInt32 ? DType::kI32 : DType::kI64;
    source_dtype = opt.int_output == IntOutput::kInt64 ? DType::kI64 : DType::kI32;
    // Batches in flight (built ahead plus being built) get a quarter of the budget, less a
    // batch per thread. When the quarter holds no more than a batch per thread, one batch is in
    // flight at a time: fewer threads build at once, but the bound holds, and the batches are
    // the same at any depth. Below one batch in the quarter, that one batch is the minimum.
    const size_t batch_bytes = std::max<size_t>(1, collator->max_batch_bytes(opt.batch_size));
    const size_t fit = opt.memory_budget / 4 / batch_bytes;
    const size_t asked = opt.prefetch_batches ? opt.prefetch_batches : 2 * size_t{thread_count};
    depth = std::min(asked, fit > thread_count ? fit - thread_count : 1);
    if (depth < asked) warn_if_threads_idle(fit, batch_bytes);
    // Dropped batches' buffers serve the next ones, within the bytes of the batches in flight.
    buffers = BufferPool::create(depth * batch_bytes);
    reset(0);
    check_nodes_memory(plan->reading());
    warn_if_nodes_share(plan->reading());
    start_workers();
  }

  // The nodes plan holds a window of each of this rank's partitions, each at least a block: with
  // many partitions to a rank and a small budget that is more than the budget holds.
  void check_nodes_memory(const ReadingGroups& r) const {
    if (opt.partition != Partition::kNodes) return;
    const uint64_t k = window_blocks_for(src[0].geo, record_size, opt, opt.memory_budget);
    const size_t block = size_t{src[0].geo.records_per_block()} * record_size;
    const size_t need = nodes_resident_bytes(src[0].geo, record_size, opt, opt.memory_budget, r);
    if (need <= opt.memory_budget / 4 * 3 || need <= 2 * k * block) return;
    throw Error(ErrorCode::kInvalidArgument, where(),
                "partition='nodes' keeps two windows of each of this rank's " +
                    std::to_string((opt.partitions + r.groups - 1) / r.groups) +
                    " partitions, at least a block each: " + std::to_string(need >> 20) +
                    " MiB of decoded blocks, more than memory_budget leaves them (" +
                    std::to_string(opt.memory_budget / 4 * 3 >> 20) +
                    " MiB); raise memory_budget, read with more ranks, or start a run with "
                    "fewer partitions");
  }

  // The nodes plan at a node count that does not divide the partitions: still exact, but groups
  // of nodes read the same blocks. Said once per process, on stderr.
  void warn_if_nodes_share(const ReadingGroups& r) const {
    static std::atomic<bool> said{false};
    if (opt.partition != Partition::kNodes || r.nodes_apart() || said.exchange(true)) return;
    const std::string share = r.groups == 1 ? "all" : "1/" + std::to_string(r.groups);
    std::fprintf(stderr,
                 "shardkit: partition='nodes': %u nodes do not divide the %u canonical partitions, "
                 "so each node reads %s of the dataset, not 1/%u (the order and resume are "
                 "unchanged; a new run with partitions a multiple of %u reads 1/%u)\n",
                 r.nodes, opt.partitions, share.c_str(), r.nodes, r.nodes, r.nodes);
  }

  // Fewer batches in flight than threads leave threads idle (a batch is built by one), which
  // nothing else shows: a run that asked for its threads would not know it builds on fewer.
  // Said once per process, on stderr.
  void warn_if_threads_idle(size_t fit, size_t batch_bytes) const {
    static std::atomic<bool> said{false};
    if (depth >= thread_count || said.exchange(true)) return;
    const std::string message =
        "shardkit: a quarter of memory_budget (" + size_text(opt.memory_budget) + ") holds " +
        std::to_string(fit) + " batch(es) of " + size_text(batch_bytes) + ", so the " +
        std::to_string(thread_count) + " loader threads build only " + std::to_string(depth) +
        " batch(es) at a time; a memory_budget of " +
        size_text(8 * size_t{thread_count} * batch_bytes) + " keeps every thread building" +
        same_order_advice() + "\n";
    std::fputs(message.c_str(), stderr);
  }

  // memory_budget also sizes the shuffle windows unless window_blocks is set, and a window is
  // part of the order: a budget raised alone would start another order, which the run's saved
  // states do not resume.
  std::string same_order_advice() const {
    if (opt.window_blocks) return "";
    if (src.size() > 1)
      return " (it also sizes the sources' shuffle windows, part of the order: a new budget "
             "starts a new order, so change it at an epoch's start)";
    const uint64_t k = window_blocks_for(src[0].geo, record_size, opt, opt.memory_budget);
    return " (with window_blocks=" + std::to_string(k) +
           ": the budget also sizes the shuffle window, part of the order, and this keeps it)";
  }

  // A thread that cannot start (a process or memory limit) stops the ones that did, and is an
  // error, not a std::terminate from a joinable thread left behind.
  void start_workers() {
    try {
      for (unsigned i = 0; i < thread_count; ++i) workers.emplace_back([this] { work(); });
    } catch (const std::system_error& e) {
      stop_workers();
      throw Error(ErrorCode::kIo, where(),
                  "cannot start loader thread " + std::to_string(workers.size() + 1) + " of " +
                      std::to_string(thread_count) + ": " + e.what() + " (pass fewer threads)");
    }
  }

  ~Impl() { stop_workers(); }

  void stop_workers() {
    {
      std::lock_guard lock(mu);
      stop = true;
    }
    work_cv.notify_all();
    for (Source& s : src) s.ds.interrupt().set();  // a worker waiting on the network stops
    for (std::thread& t : workers) t.join();
    workers.clear();
  }

  // The process that made the loader: a child after fork() has none of its threads.
  const pid_t owner = ::getpid();
  void check_process() const {
    if (::getpid() != owner)
      throw Error(ErrorCode::kUnsupported, where(),
                  "this Loader was made in process " + std::to_string(owner) +
                      " and its threads do not survive fork(): make the Loader in the process "
                      "that reads it (in a DataLoader worker: in your dataset's __iter__), or "
                      "read records with a shardkit.Dataset, which works after fork()");
  }

  // The lock of the loader's state, taken in the process that made the loader only: in a child
  // after fork() a worker of the parent may have held it at the fork, and no one would release it.
  std::unique_lock<std::mutex> lock_in_owner() const {
    check_process();
    return std::unique_lock(mu);
  }

  // A state's damaged blocks name blocks of this loader's sources.
  void check_skipped_blocks(const std::vector<std::pair<uint32_t, uint64_t>>& named) const {
    for (const auto& [source, block] : named)
      if (source >= src.size() || block >= src[source].geo.blocks())
        throw Error(ErrorCode::kInvalidArgument, where(),
                    "the state's skipped_blocks name block " + std::to_string(block) +
                        " of source " + std::to_string(source) + ", which is not in the " +
                        (source < src.size()
                             ? "source's " + std::to_string(src[source].geo.blocks()) + " blocks"
                             : "loader's " + std::to_string(src.size()) + " sources"));
  }

  std::string where() const {
    return src.size() == 1 ? src[0].ds.path().string()
                           : "mixture of " + std::to_string(src.size()) + " datasets";
  }

  // Starts `epoch` at `from`'s position and counts (set_epoch(): a state of the epoch's start).
  void reset(uint64_t epoch, const LoaderState& from = {}) {
    check_process();
    const uint64_t start = from.samples_consumed;
    {
      std::lock_guard lock(mu);
      ++generation;
      budget_spent = false;
      batch_failed = false;
      damaged.begin_epoch(from.blocks_skipped, from.skipped_blocks);
      plan =
          std::make_shared<const EpochPlan>(stream, shapes, opt, epoch, start, opt.max_tokens > 0);
      next_sched = consumer_next = 0;
      tokens_consumed = from.tokens_consumed;
      in_flight.clear();
      ready.clear();
      low_cursor.reset();
      upto_cursor.reset();
      upto_batch = UINT64_MAX;
      low_window = plan->batches() ? plan->windows_from(0, &low_cursor)
                                   : std::vector<uint64_t>(src.size(), 0);
      readahead_pending = plan->batches() > 0;
      readahead_upto = low_window;
    }
    const uint64_t gen = generation_now();
    for (Source& s : src) {
      s.ds.cache().release_below(gen, 0);
      s.ds.begin_epoch(epoch);
    }
    work_cv.notify_all();
  }

  bool can_schedule_locked() {
    if (!started || batch_failed || readahead_pending || next_sched >= plan->batches() ||
        next_sched >= consumer_next + depth)
      return false;
    const uint64_t lowest = in_flight.empty() ? next_sched : *in_flight.begin();
    if (next_sched == lowest) return true;
    // Keep at most the window being read and the next one resident, in every source.
    if (upto_batch != next_sched) {
      upto = plan->windows_upto(next_sched, &upto_cursor);
      upto_batch = next_sched;
    }
    for (size_t s = 0; s < src.size(); ++s)
      if (upto[s] > low_window[s] + 1 || upto[s] > readahead_upto[s]) return false;
    return true;
  }

  void work() {
    std::unique_lock lock(mu);
    for (;;) {
      work_cv.wait(lock, [&] { return stop || can_schedule_locked(); });
      if (stop) return;
      const uint64_t i = next_sched++;
      const uint64_t gen = generation;
      std::shared_ptr<const EpochPlan> p = plan;
      in_flight.insert(i);
      lock.unlock();
      Built built;
      try {
        build(*p, i, gen, built);
      } catch (...) {
        built.error = std::current_exception();
      }
      lock.lock();
      if (gen != generation) continue;
      in_flight.erase(i);
      batch_failed = batch_failed || built.error;
      ready.emplace(i, std::move(built));
      ++batches_built;
      const uint64_t lowest = in_flight.empty() ? next_sched : *in_flight.begin();
      std::vector<size_t> advanced;
      if (lowest < p->batches()) {
        const std::vector<uint64_t> from = p->windows_from(lowest, &low_cursor);
        for (size_t s = 0; s < src.size(); ++s)
          if (from[s] > low_window[s]) {
            low_window[s] = from[s];
            src[s].ds.cache().release_below(gen, from[s]);
            advanced.push_back(s);
          }
      } else {
        for (Source& s : src) s.ds.cache().release_below(gen, UINT64_MAX);
      }
      ready_cv.notify_all();
      work_cv.notify_all();
      for (size_t s : advanced) {
        if (gen != generation) break;
        if (low_window[s] + 1 < p->window_count(s)) {
          // The window after next may now be read: ask for its blocks first (kernel readahead,
          // which the shuffled block order would otherwise keep from guessing, or remote
          // fetches), then let batches reach into it.
          const uint64_t upcoming = low_window[s] + 1;
          lock.unlock();
          readahead(s, p->blocks_new_in(s, upcoming));
          lock.lock();
          if (gen == generation && upcoming > readahead_upto[s]) {
            readahead_upto[s] = upcoming;
            work_cv.notify_all();
          }
        } else {
          readahead_upto[s] = std::max(readahead_upto[s], low_window[s] + 1);
          work_cv.notify_all();
        }
      }
    }
  }

  // The blocks of each source's windows [first, end): those of this rank's first batches in the
  // order they will be read, then the rest. A remote source fetches in the order asked, so the
  // first batches do not wait behind a whole window.
  std::vector<std::pair<size_t, uint64_t>> blocks_in_read_order(
      const EpochPlan& p, const std::vector<uint64_t>& first,
      const std::vector<uint64_t>& end) const {
    std::vector<std::pair<size_t, uint64_t>> blocks;
    std::set<std::pair<size_t, uint64_t>> seen;
    for (uint64_t b = 0; b < std::min<uint64_t>(p.batches(), 64); ++b) {
      if (p.batch_size(b) == 0) break;
      const PlannedRows rows = p.rows(b);
      bool past = false;
      for (size_t row = 0; row < rows.size(); ++row) {
        const size_t s = rows.sources[row];
        // Rows past the last window asked for are asked for with their own window: asking
        // twice would fetch a remote block twice when it was read in between.
        if (rows.windows[row] >= end[s]) {
          past = true;
          continue;
        }
        const uint64_t block = src[s].geo.block_of_record(rows.records[row]);
        if (seen.insert({s, block}).second) blocks.emplace_back(s, block);
      }
      if (past) break;
    }
    for (size_t s = 0; s < src.size(); ++s)
      for (uint64_t w = first[s]; w < end[s]; ++w)
        for (uint64_t block : p.blocks_read(s, w))
          if (seen.insert({s, block}).second) blocks.emplace_back(s, block);
    return blocks;
  }

  void readahead(size_t source, const std::vector<uint64_t>& blocks) const {
    for (uint64_t b : blocks) try {
        src[source].ds.prefetch(b);
      } catch (...) {
        // A shard that fails to open is reported when its block is read, with its context.
      }
  }

  uint64_t generation_now() const {
    std::lock_guard lock(mu);
    return generation;
  }

  struct Wanted {
    size_t source;
    uint64_t block;
    uint64_t window;
  };

  // Blocks for a batch: claims one block nobody is decoding yet, decodes it, and repeats; then
  // waits for the blocks other threads claimed. Claiming one at a time lets threads building
  // neighbouring batches (which need mostly the same blocks when a window starts) split the
  // decoding instead of one thread claiming them all. With on_corrupt = skip a damaged block
  // comes back as its substitute (DamagedBlocks).
  std::vector<BlockPtr> acquire(const EpochPlan& p, const std::vector<Wanted>& wanted, uint64_t gen,
                                std::vector<std::pair<size_t, uint64_t>>& replaced) {
    const bool skip = opt.on_corrupt == OnCorrupt::kSkip;
    std::vector<std::shared_future<BlockPtr>> futures(wanted.size());
    for (size_t i = 0; i < wanted.size(); ++i) {
      const Wanted& w = wanted[i];
      if (skip && damaged.known(w.source, w.block)) continue;  // no refetch of a known one
      // Pinned until the last window that reads it (a later one, for a block of the nodes plan
      // that lies across two windows).
      futures[i] = claim_block(w.source, w.block,
                               {gen, p.order(w.source).last_window_of(w.block, w.window)});
      // A block this thread failed to decode for good fails the batch now: claiming the rest
      // would repeat the failure's wait for each (a shard whose server never answers).
      throw_if_fatal(futures[i], skip);
    }
    std::vector<BlockPtr> blocks(wanted.size());
    for (size_t i = 0; i < wanted.size(); ++i) {
      const Wanted& w = wanted[i];
      try {
        if (futures[i].valid()) {
          blocks[i] = futures[i].get();
          continue;
        }
      } catch (const Error& e) {
        if (!skip || !DamagedBlocks::replaceable(e)) throw;
        damaged.mark(w.source, w.block, e);
      }
      replaced.emplace_back(w.source, w.block);
      blocks[i] = damaged.substitute(
          w.source, w.block, p.order(w.source).substitute_candidates(w.block, w.window), w.window,
          [&](uint64_t b) {
            return claim_block(w.source, b, {gen, w.window}).get();
          },
          src[w.source].ds.path().string());
    }
    return blocks;
  }

  // Rethrows the error a decoded block's future holds, unless on_corrupt = skip replaces it.
  static void throw_if_fatal(const std::shared_future<BlockPtr>& f, bool skip) {
    if (f.wait_for(std::chrono::seconds(0)) != std::future_status::ready) return;
    try {
      f.get();
    } catch (const Error& e) {
      if (!skip || !DamagedBlocks::replaceable(e)) throw;
    }
  }

  // The block's future, pinned to `pin`; decoded here when nobody else is decoding it.
  std::shared_future<BlockPtr> claim_block(size_t source, uint64_t block, BlockCache::Pin pin) {
    const Dataset& ds = src[source].ds;
    BlockCache::Claim claim = ds.cache().claim(block, pin);
    if (claim.mine()) {
      try {
        ds.cache().finish(block, claim, ds.decode_block(block));
        decoded.fetch_add(1, std::memory_order_relaxed);
      } catch (...) {
        ds.cache().finish(block, claim, std::current_exception());
      }
    }
    return claim.block;
  }

  // Rows whose block was replaced read the substitute's record in the same slot (wrapping in a
  // shorter block).
  void substitute_rows(const std::vector<BlockPtr>& blocks, const std::vector<Wanted>& wanted,
                       PlannedRows& rows, std::vector<std::pair<size_t, uint32_t>>& where) const {
    for (size_t r = 0; r < rows.size(); ++r) {
      auto& [i, slot] = where[r];
      if (blocks[i]->id == wanted[i].block) continue;
      slot %= blocks[i]->records;
      rows.records[r] = src[rows.sources[r]].geo.block_first_record(blocks[i]->id) + slot;
    }
  }

  // A wanted block per (source, block, pass): a damaged block read by two passes of its source
  // in one batch lies in a different shuffle window in each, so each pass's rows need that
  // pass's substitute (and pin).
  using WantedKey = std::tuple<size_t, uint64_t, uint32_t>;

  // Each row's (wanted block index, record slot), adding the blocks not yet wanted.
  std::vector<std::pair<size_t, uint32_t>> locate_rows(const PlannedRows& rows,
                                                       std::vector<Wanted>& wanted,
                                                       std::map<WantedKey, size_t>& index) const {
    std::vector<std::pair<size_t, uint32_t>> where(rows.size());
    for (size_t r = 0; r < rows.size(); ++r) {
      const size_t s = rows.sources[r];
      const uint64_t rec = rows.records[r];
      const uint64_t block = src[s].geo.block_of_record(rec);
      auto [it, fresh] = index.emplace(WantedKey{s, block, rows.passes[r]}, wanted.size());
      if (fresh) wanted.push_back({s, block, rows.windows[r]});
      where[r] = {it->second, static_cast<uint32_t>(rec - src[s].geo.block_first_record(block))};
    }
    return where;
  }

  // Batch `index` of plan `p` into out.batch; with max_tokens, out.step_lengths gets the tokens
  // of every rank's rows of its step, in position order.
  void build(const EpochPlan& p, uint64_t index, uint64_t gen, Built& out) {
    auto batch = out.batch = std::make_shared<Batch>();
    batch->epoch = p.epoch();
    batch->index = index;
    batch->buffers = buffers;
    PlannedRows rows = p.rows(index);
    const size_t n = rows.size();
    std::vector<Wanted> wanted;
    std::map<WantedKey, size_t> slot_of_block;
    auto where = locate_rows(rows, wanted, slot_of_block);
    // max_tokens: every rank's rows of the step are counted, the same sum on every rank.
    PlannedRows step;
    std::vector<std::pair<size_t, uint32_t>> step_where;
    if (opt.max_tokens) {
      step = p.step_rows(index);
      step_where = locate_rows(step, wanted, slot_of_block);
    }
    const std::vector<BlockPtr> blocks = acquire(p, wanted, gen, out.replaced);
    substitute_rows(blocks, wanted, rows, where);
    substitute_rows(blocks, wanted, step, step_where);
    for (size_t r = 0; r < step.size(); ++r) {
      const Field* len = src[step.sources[r]].length;
      const unsigned char* row = blocks[step_where[r].first]->record(step_where[r].second);
      int64_t v = 0;
      cast_elements(len->dtype, row + len->offset, DType::kI64, &v, 1);
      const uint64_t tokens = static_cast<uint64_t>(std::max<int64_t>(v, 0));
      batch->step_tokens += tokens;
      out.step_lengths.push_back(tokens);
    }
    std::vector<const unsigned char*> ptrs(n);
    std::vector<unsigned char> repacked;
    for (size_t r = 0; r < n; ++r) {
      ptrs[r] = blocks[where[r].first]->record(where[r].second);
      const Source& s = src[rows.sources[r]];
      if (s.layout && !s.layout->same()) {
        if (repacked.empty()) repacked.assign(n * record_size, 0);
        s.layout->repack(ptrs[r], repacked.data() + r * record_size);
        ptrs[r] = repacked.data() + r * record_size;
      }
    }
    batch->records = rows.records;
    batch->sources = rows.sources;
    collator->collate(ptrs, *batch);
    if (opt.source_field) {
      Column col("source", source_dtype, {static_cast<int64_t>(n)});
      for (size_t r = 0; r < n; ++r) col.set(r, rows.sources[r]);
      batch->columns.push_back(std::move(col));
    }
    if (opt.mlm.enabled)
      apply_mlm(*batch, opt.mlm, p.seed(), batch->find(opt.length_field), labels_dtype,
                rows.passes);
    for (const BatchTransform& t : opt.transforms) t(*batch);
  }

  // The workers ask for the window after next as they go; the first two are asked for here,
  // when the epoch is really read (a set_epoch right after construction reads none), and before
  // any worker starts: a block read before it is asked for would be fetched twice from a remote
  // dataset.
  void ask_first_windows(std::unique_lock<std::mutex>& lock) {
    std::shared_ptr<const EpochPlan> p = plan;
    const std::vector<uint64_t> first = low_window;
    std::vector<uint64_t> end(src.size());
    for (size_t s = 0; s < src.size(); ++s)
      end[s] = std::min(first[s] + 2, std::max(p->window_count(s), first[s]));
    lock.unlock();
    for (const auto& [s, block] : blocks_in_read_order(*p, first, end)) readahead(s, {block});
    lock.lock();
    readahead_pending = false;
    for (size_t s = 0; s < src.size(); ++s)
      readahead_upto[s] = std::max(readahead_upto[s], first[s] + 1);
    work_cv.notify_all();
  }

  std::shared_ptr<Batch> next(const std::function<void()>* while_waiting) {
    check_process();
    std::unique_lock lock(mu);
    if (!started) {
      started = true;
      work_cv.notify_all();
    }
    if (readahead_pending) ask_first_windows(lock);
    if (budget_spent || consumer_next >= plan->batches()) return nullptr;
    if (opt.max_tokens && tokens_consumed >= opt.max_tokens) {
      budget_spent = true;
      return nullptr;
    }
    wait_ready(lock, while_waiting);
    auto it = ready.find(consumer_next);
    // A failed batch stays in place: asking again rethrows the same error.
    if (it->second.error) std::rethrow_exception(it->second.error);
    Built built = std::move(it->second);
    ready.erase(it);
    if (opt.max_tokens) return within_budget(lock, std::move(built));
    ++consumer_next;
    work_cv.notify_all();
    damaged.delivered(built.replaced);
    return built.batch;
  }

  // max_tokens: the epoch ends at the position whose tokens reach the budget, whatever the
  // topology, so that a resume at any world size and batch size ends it at the same sample. A
  // step that reaches it part way is replaced by the epoch's last, shorter step ending there
  // (rows wrapping to the epoch's first positions as at any end, or dropped with drop_last).
  std::shared_ptr<Batch> within_budget(std::unique_lock<std::mutex>& lock, Built built) {
    const uint64_t step = consumer_next++;
    work_cv.notify_all();
    const std::vector<uint64_t>& lengths = built.step_lengths;
    const size_t kept = positions_within_budget(lengths, tokens_consumed, opt.max_tokens);
    const uint64_t first = plan->schedule().step_first(step);
    const uint64_t real = first >= plan->end() ? 0 : std::min(lengths.size(), plan->end() - first);
    if (kept == lengths.size() || kept >= real) {
      tokens_consumed += built.batch->step_tokens;
      budget_spent = tokens_consumed >= opt.max_tokens;
      damaged.delivered(built.replaced);
      return built.batch;
    }
    budget_spent = true;
    next_sched = std::max(next_sched, plan->batches());  // nothing more to build this epoch
    const auto last = std::make_shared<const EpochPlan>(stream, shapes, opt, plan->epoch(), first,
                                                        true, first + kept);
    if (last->batches() == 0) return nullptr;
    const uint64_t gen = generation;
    lock.unlock();
    Built final;
    build(*last, 0, gen, final);
    final.batch->index = step;
    lock.lock();
    tokens_consumed += final.batch->step_tokens;
    damaged.delivered(final.replaced);
    return final.batch;
  }

  // Until batch consumer_next is built (or failed), options.timeout at most, calling
  // `while_waiting` every 50 ms.
  void wait_ready(std::unique_lock<std::mutex>& lock, const std::function<void()>* while_waiting) {
    auto have = [&] { return ready.count(consumer_next) > 0; };
    using Clock = std::chrono::steady_clock;
    const bool timed = opt.timeout.count() > 0;
    const Clock::time_point deadline = Clock::now() + (timed ? opt.timeout : Clock::duration{});
    while (!have()) {
      if (timed && Clock::now() >= deadline)
        throw Error(ErrorCode::kTimeout, where(),
                    "no batch within " + std::to_string(opt.timeout.count()) + " ms (batch " +
                        std::to_string(consumer_next) + " of epoch " +
                        std::to_string(plan->epoch()) + ")");
      if (!while_waiting && !timed) {
        ready_cv.wait(lock, have);
        return;
      }
      auto until = while_waiting ? Clock::now() + std::chrono::milliseconds(50) : deadline;
      if (timed) until = std::min(until, deadline);
      if (ready_cv.wait_until(lock, until, have) || !while_waiting) continue;
      lock.unlock();
      (*while_waiting)();
      lock.lock();
    }
  }

  LoaderState state() const {
    const auto lock = lock_in_owner();
    uint64_t consumed =
        consumer_next == 0 ? plan->start() : plan->consumed_after(consumer_next - 1);
    if (budget_spent) consumed = plan->size();
    return LoaderState{
        plan->seed(),      plan->epoch(),           consumed, tokens_consumed, fingerprints.current,
        damaged.skipped(), damaged.skipped_blocks()};
  }
};

Loader::Loader(const std::filesystem::path& dir, LoaderOptions options)
    : Loader(std::vector<MixtureSource>{MixtureSource{dir.string(), {}, {}, {}}},
             std::move(options)) {}
Loader::Loader(const std::vector<MixtureSource>& sources, LoaderOptions options)
    : impl_(std::make_unique<Impl>(sources, std::move(options))) {}
Loader::~Loader() {
  // In a child after fork(): the workers, and the locks they held, belong to the parent.
  if (::getpid() != impl_->owner) (void)impl_.release();
}

const Dataset& Loader::dataset(size_t source) const { return impl_->src.at(source).ds; }
size_t Loader::sources() const { return impl_->src.size(); }
uint64_t Loader::epoch_samples() const { return impl_->stream->size(); }
const LoaderOptions& Loader::options() const { return impl_->opt; }
unsigned Loader::threads() const { return impl_->thread_count; }
uint64_t Loader::window_blocks() const {
  const Impl& i = *impl_;
  return window_blocks_for(i.src[0].geo, i.record_size, i.opt, i.opt.memory_budget / i.src.size());
}

void Loader::set_epoch(uint64_t epoch) { impl_->reset(epoch); }

uint64_t Loader::epoch() const {
  const auto lock = impl_->lock_in_owner();
  return impl_->plan->epoch();
}

uint64_t Loader::batches() const {
  const auto lock = impl_->lock_in_owner();
  return impl_->plan->batches();
}

uint64_t Loader::batches_left() const {
  const auto lock = impl_->lock_in_owner();
  if (impl_->budget_spent) return 0;
  if (impl_->opt.max_tokens && impl_->tokens_consumed >= impl_->opt.max_tokens) return 0;
  return impl_->plan->batches() - std::min(impl_->consumer_next, impl_->plan->batches());
}

uint64_t Loader::epoch_batches() const {
  const auto lock = impl_->lock_in_owner();
  return EpochPlan(impl_->stream, impl_->shapes, impl_->opt, impl_->plan->epoch(), 0).batches();
}

std::shared_ptr<Batch> Loader::next() { return impl_->next(nullptr); }
std::shared_ptr<Batch> Loader::next(const std::function<void()>& while_waiting) {
  return impl_->next(&while_waiting);
}
LoaderState Loader::state() const { return impl_->state(); }

void Loader::restore(const LoaderState& state) {
  const uint64_t epoch_size = impl_->stream->size();
  if (state.samples_consumed > epoch_size)
    throw Error(ErrorCode::kInvalidArgument, impl_->where(),
                "samples_consumed " + std::to_string(state.samples_consumed) +
                    " is past the epoch's end: the valid range is 0.." +
                    std::to_string(epoch_size) +
                    (impl_->src.size() == 1 && !impl_->opt.max_samples ? " (the dataset's records)"
                                                                       : " (the epoch's samples)"));
  {
    const auto lock = impl_->lock_in_owner();
    std::string data;
    for (const Impl::Source& s : impl_->src)
      data += (data.empty() ? "" : ", ") + s.ds.path().string();
    check_resumable(state.fingerprint, state.seed, impl_->fingerprints, impl_->opt.seed, data);
    impl_->opt.seed = state.seed;  // a state saved before fingerprints brings its seed
  }
  impl_->check_skipped_blocks(state.skipped_blocks);
  impl_->reset(state.epoch, state);
}

std::vector<uint64_t> Loader::planned_records(uint64_t batch) const {
  return planned_rows(batch).records;
}

PlannedRows Loader::planned_rows(uint64_t batch) const {
  std::shared_ptr<const EpochPlan> p;
  {
    const auto lock = impl_->lock_in_owner();
    p = impl_->plan;
  }
  if (batch >= p->batches())
    throw Error(ErrorCode::kInvalidArgument, impl_->where(),
                "batch " + std::to_string(batch) + " is past the epoch's " +
                    std::to_string(p->batches()) + " batches");
  return p->rows(batch);
}

LoaderStats Loader::stats() const {
  LoaderStats s;
  s.blocks_decoded = impl_->decoded.load();
  {
    const auto lock = impl_->lock_in_owner();
    s.batches_built = impl_->batches_built;
  }
  for (const Impl::Source& src : impl_->src)
    s.resident_block_bytes += src.ds.cache().resident_bytes();
  return s;
}

}  // namespace shardkit::loader
