#include "loader/loader.h"

#include <algorithm>
#include <condition_variable>
#include <future>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <unordered_map>

#include "core/error.h"
#include "loader/collator.h"
#include "loader/geometry.h"
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
  uint64_t low_window = 0;  // window of the first row of the lowest batch not yet built
  uint64_t batches_built = 0;
  std::vector<std::thread> workers;

  // Decoded blocks, tagged with the window that needs them; dropped once every batch that
  // reads that window is built.
  struct PoolEntry {
    uint64_t window;
    uint64_t generation;  // entries of an abandoned epoch carry a stale window
    std::shared_future<BlockPtr> block;
  };
  mutable std::mutex pool_mu;
  std::unordered_map<uint64_t, PoolEntry> pool;
  std::atomic<uint64_t> decoded{0};

  Impl(const std::filesystem::path& dir, LoaderOptions o)
      : Impl(Dataset::open(dir, DatasetOptions{0}), std::move(o)) {}
  Impl(Dataset dataset, LoaderOptions o)
      : opt(with_dataset_defaults(std::move(o), dataset.info())),
        ds(std::move(dataset)),
        geo(Geometry::of(ds.manifest())),
        record_size(ds.schema().record_size()),
        collator(ds.schema(), ds.info(), opt) {
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
    }
    {
      std::lock_guard lock(pool_mu);
      pool.clear();
    }
    work_cv.notify_all();
  }

  bool can_schedule_locked() const {
    if (!started || next_sched >= plan->batches() || next_sched >= consumer_next + depth)
      return false;
    const uint64_t lowest = in_flight.empty() ? next_sched : *in_flight.begin();
    if (next_sched == lowest) return true;
    // Keep at most the window being read and the next one resident.
    const uint64_t last = plan->batch_size(next_sched) - 1;
    return window_of_row(*plan, next_sched, last) <= low_window + 1;
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
        // The window after next may now be read: ask the kernel to start reading its blocks,
        // which the shuffled block order would otherwise keep readahead from guessing.
        const uint64_t upcoming = low_window + 1;
        lock.unlock();
        readahead(p->order().blocks_of_window(upcoming));
        lock.lock();
      }
    }
  }

  void readahead(const std::vector<uint64_t>& blocks) const {
    for (uint64_t b : blocks) try {
        ds.prefetch(b);
      } catch (...) {
        // A shard that fails to open is reported when its block is read, with its context.
      }
  }

  void evict_below(uint64_t window, uint64_t gen) {
    std::lock_guard lock(pool_mu);
    for (auto it = pool.begin(); it != pool.end();)
      it = it->second.window < window || it->second.generation != gen ? pool.erase(it)
                                                                      : std::next(it);
  }

  // Blocks for a batch: claims one block nobody is decoding yet, decodes it, and repeats; then
  // waits for the blocks other threads claimed. Claiming one at a time lets threads building
  // neighbouring batches (which need mostly the same blocks when a window starts) split the
  // decoding instead of one thread claiming them all.
  std::vector<BlockPtr> acquire(const std::vector<std::pair<uint64_t, uint64_t>>& wanted,
                                uint64_t gen) {
    std::vector<std::shared_future<BlockPtr>> futures(wanted.size());
    size_t next = 0;
    for (;;) {
      std::promise<BlockPtr> promise;
      size_t mine = wanted.size();
      {
        std::lock_guard lock(pool_mu);
        for (; next < wanted.size(); ++next) {
          auto it = pool.find(wanted[next].first);
          if (it != pool.end()) {
            futures[next] = it->second.block;
            continue;
          }
          futures[next] = promise.get_future().share();
          pool.emplace(wanted[next].first, PoolEntry{wanted[next].second, gen, futures[next]});
          mine = next++;
          break;
        }
      }
      if (mine == wanted.size()) break;
      try {
        promise.set_value(ds.block(wanted[mine].first));
        decoded.fetch_add(1, std::memory_order_relaxed);
      } catch (...) {
        promise.set_exception(std::current_exception());
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
  std::lock_guard lock(impl_->pool_mu);
  for (const auto& [id, entry] : impl_->pool)
    if (entry.block.wait_for(std::chrono::seconds(0)) == std::future_status::ready) try {
        s.resident_block_bytes += entry.block.get()->bytes.size();
      } catch (...) {
      }
  return s;
}

}  // namespace shardkit::loader
