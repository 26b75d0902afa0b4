#include "loader/loader.h"

#include <algorithm>
#include <condition_variable>
#include <future>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <unordered_map>
#include <unordered_set>

#include "core/error.h"
#include "core/geometry.h"
#include "loader/collator.h"
#include "loader/distributed_env.h"
#include "loader/mlm.h"
#include "loader/plan.h"

namespace shardkit::loader {

namespace {

using BlockPtr = std::shared_ptr<const DecodedBlock>;

struct Built {
  std::shared_ptr<Batch> batch;
  std::exception_ptr error;
};

}  // namespace

struct Loader::Impl {
  LoaderOptions opt;
  Dataset ds;
  Geometry geo;
  size_t record_size;
  Collator collator;
  unsigned thread_count = 1;
  size_t depth = 2;
  DType labels_dtype = DType::kI64;

  mutable std::mutex mu;
  std::condition_variable work_cv, ready_cv;
  bool stop = false;
  bool started = false;
  uint64_t generation = 0;
  std::shared_ptr<const EpochPlan> plan;
  uint64_t next_sched = 0;     // next batch a worker will take
  uint64_t consumer_next = 0;  // next batch next() returns
  std::set<uint64_t> in_flight;
  std::map<uint64_t, Built> ready;
  uint64_t low_window = 0;         // window of the first row of the lowest batch not yet built
  bool readahead_pending = false;  // the plan's first two windows are not asked for yet
  // The last window asked for ahead: no batch reaching past it is started before it is, so a
  // remote block is never read before it is asked for (which would fetch it twice).
  uint64_t readahead_upto = 0;
  uint64_t batches_built = 0;
  std::vector<std::thread> workers;

  // Decoded blocks live in the dataset's BlockCache, pinned to the window that needs them and
  // released once every batch that reads that window is built. The cache's LRU budget is 0:
  // the window logic alone decides what stays resident.
  std::atomic<uint64_t> decoded{0};

  // Remote bytes fetched ahead are held in memory until read: half the budget unless set.
  static LoaderOptions with_source_defaults(LoaderOptions o) {
    if (o.source.prefetch_bytes == 0)
      o.source.prefetch_bytes = std::max<size_t>(1, o.memory_budget / 2);
    return o;
  }

  Impl(const std::filesystem::path& dir, LoaderOptions o)
      : Impl(with_source_defaults(std::move(o)), dir) {}
  Impl(LoaderOptions&& o, const std::filesystem::path& dir)
      : Impl(Dataset::open(dir, DatasetOptions{0, o.source}), std::move(o)) {}
  // `o` by reference: the dataset argument reads o.source, and a by-value parameter could be
  // moved into before that argument is evaluated.
  Impl(Dataset dataset, LoaderOptions&& o)
      : opt(with_dataset_defaults(std::move(o), dataset.info())),
        ds(std::move(dataset)),
        geo(Geometry::of(ds.manifest())),
        record_size(ds.schema().record_size()),
        collator(ds.schema(), ds.info(), opt) {
    opt.rank = effective_rank(opt);
    opt.world_size = effective_world_size(opt);
    validate_mlm(opt.mlm);
    if (opt.mlm.enabled && !ds.schema().find(opt.mlm.input_field))
      throw Error(ErrorCode::kInvalidArgument, ds.path().string(),
                  "MLM input field '" + opt.mlm.input_field + "' is not in the dataset");
    labels_dtype = opt.int_output == IntOutput::kInt32 ? DType::kI32 : DType::kI64;
    thread_count = opt.threads ? opt.threads : std::max(1u, std::thread::hardware_concurrency());
    // Batches in flight (built ahead plus being built) get a quarter of the budget.
    const size_t batch_bytes = std::max<size_t>(1, collator.max_batch_bytes(opt.batch_size));
    const size_t fit = opt.memory_budget / 4 / batch_bytes;
    depth = opt.prefetch_batches ? opt.prefetch_batches : 2 * size_t{thread_count};
    if (fit > thread_count) depth = std::min(depth, fit - thread_count);
    depth = std::max<size_t>(depth, 1);
    reset(0, 0);
    for (unsigned i = 0; i < thread_count; ++i) workers.emplace_back([this] { work(); });
  }

  ~Impl() {
    {
      std::lock_guard lock(mu);
      stop = true;
    }
    work_cv.notify_all();
    for (std::thread& t : workers) t.join();
  }

  uint64_t window_of_row(const EpochPlan& p, uint64_t batch, uint64_t row) const {
    return p.order().window_of(p.position(batch, row));
  }

  void reset(uint64_t epoch, uint64_t start) {
    {
      std::lock_guard lock(mu);
      ++generation;
      plan = std::make_shared<const EpochPlan>(geo, record_size, opt, epoch, start);
      next_sched = consumer_next = 0;
      in_flight.clear();
      ready.clear();
      low_window = plan->batches() ? window_of_row(*plan, 0, 0) : 0;
      readahead_pending = plan->batches() > 0;
      readahead_upto = low_window;
    }
    ds.cache().release_below(generation_now(), 0);
    ds.begin_epoch(epoch);
    work_cv.notify_all();
  }

  bool can_schedule_locked() const {
    if (!started || readahead_pending || next_sched >= plan->batches() ||
        next_sched >= consumer_next + depth)
      return false;
    const uint64_t lowest = in_flight.empty() ? next_sched : *in_flight.begin();
    if (next_sched == lowest) return true;
    // Keep at most the window being read and the next one resident.
    const uint64_t last = plan->batch_size(next_sched) - 1;
    const uint64_t window = window_of_row(*plan, next_sched, last);
    return window <= low_window + 1 && window <= readahead_upto;
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
        built.batch = build(*p, i, gen);
      } catch (...) {
        built.error = std::current_exception();
      }
      lock.lock();
      if (gen != generation) continue;
      in_flight.erase(i);
      ready.emplace(i, std::move(built));
      ++batches_built;
      const uint64_t lowest = in_flight.empty() ? next_sched : *in_flight.begin();
      bool advanced = false;
      if (lowest < p->batches()) {
        const uint64_t w = window_of_row(*p, lowest, 0);
        if (w > low_window) {
          low_window = w;
          evict_below(w, gen);
          advanced = true;
        }
      } else {
        evict_below(UINT64_MAX, gen);
      }
      ready_cv.notify_all();
      work_cv.notify_all();
      if (advanced && low_window + 1 < p->order().window_count()) {
        // The window after next may now be read: ask for its blocks first (kernel readahead,
        // which the shuffled block order would otherwise keep from guessing, or remote
        // fetches), then let batches reach into it.
        const uint64_t upcoming = low_window + 1;
        lock.unlock();
        readahead(p->order().blocks_of_window(upcoming));
        lock.lock();
        if (gen == generation && upcoming > readahead_upto) {
          readahead_upto = upcoming;
          work_cv.notify_all();
        }
      } else if (advanced) {
        readahead_upto = std::max(readahead_upto, low_window + 1);
        work_cv.notify_all();
      }
    }
  }

  // The blocks of windows [first, end): those of this rank's first batches in the order they
  // will be read, then the rest. A remote source fetches in the order asked, so the first
  // batches do not wait behind a whole window.
  std::vector<uint64_t> blocks_in_read_order(const EpochPlan& p, uint64_t first,
                                             uint64_t end) const {
    std::vector<uint64_t> blocks;
    std::unordered_set<uint64_t> seen;
    for (uint64_t b = 0; b < std::min<uint64_t>(p.batches(), 64); ++b) {
      if (p.batch_size(b) == 0 || window_of_row(p, b, 0) >= end) break;
      const std::vector<uint64_t> records = p.records(b);
      for (uint64_t row = 0; row < records.size(); ++row) {
        // Rows past the last window asked for are asked for with their own window: asking
        // twice would fetch a remote block twice when it was read in between.
        if (window_of_row(p, b, row) >= end) break;
        if (const uint64_t block = geo.block_of_record(records[row]); seen.insert(block).second)
          blocks.push_back(block);
      }
    }
    for (uint64_t w = first; w < end; ++w)
      for (uint64_t block : p.order().blocks_of_window(w))
        if (seen.insert(block).second) blocks.push_back(block);
    return blocks;
  }

  void readahead(const std::vector<uint64_t>& blocks) const {
    for (uint64_t b : blocks) try {
        ds.prefetch(b);
      } catch (...) {
        // A shard that fails to open is reported when its block is read, with its context.
      }
  }

  uint64_t generation_now() const {
    std::lock_guard lock(mu);
    return generation;
  }

  void evict_below(uint64_t window, uint64_t gen) { ds.cache().release_below(gen, window); }

  // Blocks for a batch: claims one block nobody is decoding yet, decodes it, and repeats; then
  // waits for the blocks other threads claimed. Claiming one at a time lets threads building
  // neighbouring batches (which need mostly the same blocks when a window starts) split the
  // decoding instead of one thread claiming them all.
  std::vector<BlockPtr> acquire(const std::vector<std::pair<uint64_t, uint64_t>>& wanted,
                                uint64_t gen) {
    std::vector<std::shared_future<BlockPtr>> futures(wanted.size());
    for (size_t i = 0; i < wanted.size(); ++i) {
      const auto [block, window] = wanted[i];
      BlockCache::Claim claim = ds.cache().claim(block, {gen, window});
      futures[i] = claim.block;
      if (!claim.mine()) continue;
      try {
        ds.cache().finish(block, claim, ds.decode_block(block));
        decoded.fetch_add(1, std::memory_order_relaxed);
      } catch (...) {
        ds.cache().finish(block, claim, std::current_exception());
      }
    }
    std::vector<BlockPtr> blocks(wanted.size());
    for (size_t i = 0; i < wanted.size(); ++i) blocks[i] = futures[i].get();
    return blocks;
  }

  std::shared_ptr<Batch> build(const EpochPlan& p, uint64_t index, uint64_t gen) {
    auto batch = std::make_shared<Batch>();
    batch->epoch = p.epoch();
    batch->index = index;
    batch->records = p.records(index);
    const size_t n = batch->records.size();
    const uint64_t w_first = window_of_row(p, index, 0);
    const bool one_window = n == 0 || window_of_row(p, index, n - 1) == w_first;
    std::vector<std::pair<uint64_t, uint64_t>> wanted;  // (block, window)
    std::unordered_map<uint64_t, size_t> slot_of_block;
    std::vector<std::pair<size_t, uint32_t>> where(n);  // (wanted index, record slot)
    for (size_t r = 0; r < n; ++r) {
      const uint64_t rec = batch->records[r];
      const uint64_t block = geo.block_of_record(rec);
      auto [it, fresh] = slot_of_block.emplace(block, wanted.size());
      if (fresh) wanted.emplace_back(block, one_window ? w_first : window_of_row(p, index, r));
      where[r] = {it->second, static_cast<uint32_t>(rec - geo.block_first_record(block))};
    }
    const std::vector<BlockPtr> blocks = acquire(wanted, gen);
    std::vector<const unsigned char*> rows(n);
    for (size_t r = 0; r < n; ++r) rows[r] = blocks[where[r].first]->record(where[r].second);
    collator.collate(rows, *batch);
    if (opt.mlm.enabled)
      apply_mlm(*batch, opt.mlm, p.seed(), batch->find(opt.length_field), labels_dtype);
    for (const BatchTransform& t : opt.transforms) t(*batch);
    return batch;
  }

  std::shared_ptr<Batch> next() {
    std::unique_lock lock(mu);
    if (!started) {
      started = true;
      work_cv.notify_all();
    }
    if (readahead_pending) {
      // The workers ask for the window after next as they go; the first two are asked for
      // here, when the epoch is really read (a set_epoch right after construction reads none),
      // and before any worker starts: a block read before it is asked for would be fetched
      // twice from a remote dataset.
      std::shared_ptr<const EpochPlan> p = plan;
      const uint64_t first = low_window;
      lock.unlock();
      readahead(blocks_in_read_order(*p, first, std::min(first + 2, p->order().window_count())));
      lock.lock();
      readahead_pending = false;
      readahead_upto = std::max(readahead_upto, first + 1);
      work_cv.notify_all();
    }
    if (consumer_next >= plan->batches()) return nullptr;
    auto have = [&] { return ready.count(consumer_next) > 0; };
    if (opt.timeout.count() > 0) {
      if (!ready_cv.wait_for(lock, opt.timeout, have))
        throw Error(ErrorCode::kTimeout, ds.path().string(),
                    "no batch within " + std::to_string(opt.timeout.count()) + " ms (batch " +
                        std::to_string(consumer_next) + " of epoch " +
                        std::to_string(plan->epoch()) + ")");
    } else {
      ready_cv.wait(lock, have);
    }
    auto it = ready.find(consumer_next);
    // A failed batch stays in place: asking again rethrows the same error.
    if (it->second.error) std::rethrow_exception(it->second.error);
    std::shared_ptr<Batch> batch = std::move(it->second.batch);
    ready.erase(it);
    ++consumer_next;
    work_cv.notify_all();
    return batch;
  }

  LoaderState state() const {
    std::lock_guard lock(mu);
    const uint64_t consumed =
        consumer_next == 0 ? plan->start() : plan->consumed_after(consumer_next - 1);
    return LoaderState{plan->seed(), plan->epoch(), consumed};
  }
};

Loader::Loader(const std::filesystem::path& dir, LoaderOptions options)
    : impl_(std::make_unique<Impl>(dir, std::move(options))) {}
Loader::~Loader() = default;

const Dataset& Loader::dataset() const { return impl_->ds; }
const LoaderOptions& Loader::options() const { return impl_->opt; }
unsigned Loader::threads() const { return impl_->thread_count; }
uint64_t Loader::window_blocks() const {
  return window_blocks_for(impl_->geo, impl_->record_size, impl_->opt);
}

void Loader::set_epoch(uint64_t epoch) { impl_->reset(epoch, 0); }

uint64_t Loader::epoch() const {
  std::lock_guard lock(impl_->mu);
  return impl_->plan->epoch();
}

uint64_t Loader::batches() const {
  std::lock_guard lock(impl_->mu);
  return impl_->plan->batches();
}

std::shared_ptr<Batch> Loader::next() { return impl_->next(); }
LoaderState Loader::state() const { return impl_->state(); }

void Loader::restore(const LoaderState& state) {
  const uint64_t epoch_size = impl_->geo.records();
  if (state.samples_consumed > epoch_size)
    throw Error(ErrorCode::kInvalidArgument, impl_->ds.path().string(),
                "samples_consumed " + std::to_string(state.samples_consumed) +
                    " is past the epoch's end: the valid range is 0.." +
                    std::to_string(epoch_size) + " (the dataset's records)");
  {
    std::lock_guard lock(impl_->mu);
    impl_->opt.seed = state.seed;
  }
  impl_->reset(state.epoch, state.samples_consumed);
}

std::vector<uint64_t> Loader::planned_records(uint64_t batch) const {
  std::shared_ptr<const EpochPlan> p;
  {
    std::lock_guard lock(impl_->mu);
    p = impl_->plan;
  }
  if (batch >= p->batches())
    throw Error(ErrorCode::kInvalidArgument, impl_->ds.path().string(),
                "batch " + std::to_string(batch) + " is past the epoch's " +
                    std::to_string(p->batches()) + " batches");
  return p->records(batch);
}

LoaderStats Loader::stats() const {
  LoaderStats s;
  s.blocks_decoded = impl_->decoded.load();
  {
    std::lock_guard lock(impl_->mu);
    s.batches_built = impl_->batches_built;
  }
  s.resident_block_bytes = impl_->ds.cache().resident_bytes();
  return s;
}

}  // namespace shardkit::loader
