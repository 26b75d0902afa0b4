#include "core/remote/remote_store.h"

#include <condition_variable>
#include <deque>
#include <functional>
#include <future>
#include <map>
#include <mutex>
#include <thread>
#include <unordered_set>
#include <vector>

#include "core/error.h"
#include "core/location.h"
#include "core/remote/aws_credentials.h"
#include "core/remote/disk_cache.h"
#include "core/remote/http_transport.h"
#include "format/shard_format.h"

namespace shardkit::remote {
namespace {

// Runs prefetch tasks on a few threads; tasks left when it is destroyed are dropped. The last
// owner of a source may be a task, so the pool can be destroyed by one of its own threads: that
// thread is detached, and the queue it still looks at lives on in a shared State.
class TaskPool {
 public:
  // Whether the calling thread is a pool thread: work it asks ahead for runs at once, instead
  // of queueing behind everything else asked for.
  static bool& on_pool_thread() {
    thread_local bool mine = false;
    return mine;
  }

  explicit TaskPool(unsigned threads) : st_(std::make_shared<State>()) {
    for (unsigned i = 0; i < threads; ++i) threads_.emplace_back([st = st_] { run(*st); });
  }
  ~TaskPool() {
    {
      std::lock_guard lock(st_->mu);
      st_->stop = true;
    }
    st_->cv.notify_all();
    for (auto& t : threads_) {
      if (t.get_id() == std::this_thread::get_id())
        t.detach();
      else
        t.join();
    }
  }
  void post(std::function<void()> task) {
    {
      std::lock_guard lock(st_->mu);
      st_->tasks.push_back(std::move(task));
    }
    st_->cv.notify_one();
  }

 private:
  struct State {
    std::mutex mu;
    std::condition_variable cv;
    std::deque<std::function<void()>> tasks;
    bool stop = false;
  };
  static void run(State& st) {
    on_pool_thread() = true;
    std::unique_lock lock(st.mu);
    for (;;) {
      st.cv.wait(lock, [&] { return st.stop || !st.tasks.empty(); });
      if (st.stop) return;
      auto task = std::move(st.tasks.front());
      st.tasks.pop_front();
      lock.unlock();
      try {
        task();
      } catch (...) {
        // A prefetch that fails is retried, and reported, by the read that needs the bytes.
      }
      task = nullptr;  // what it held goes here, outside the lock
      lock.lock();
    }
  }
  std::shared_ptr<State> st_;
  std::vector<std::thread> threads_;
};

struct Shared {
  SourceOptions options;
  HttpTransport transport;
  std::unique_ptr<DiskCache> cache;
  // Prefetched bytes held in memory (no disk cache, or not yet read): bounded.
  std::atomic<uint64_t> held_bytes{0};
  uint64_t held_limit;
  TaskPool pool;  // last: its threads stop before the rest goes

  Shared(const SourceOptions& o, std::optional<AwsSigning> signing)
      : options(o),
        transport(o, std::move(signing)),
        cache(o.cache_dir.empty() ? nullptr
                                  : std::make_unique<DiskCache>(o.cache_dir, o.cache_limit)),
        held_limit(o.prefetch_bytes ? o.prefetch_bytes : 256ull << 20),
        pool(std::max(1u, o.remote_concurrency)) {}
};

class RemoteSource : public BlockSource, public std::enable_shared_from_this<RemoteSource> {
 public:
  RemoteSource(std::shared_ptr<Shared> shared, std::string url, std::string display, uint64_t size,
               uint64_t version)
      : shared_(std::move(shared)),
        url_(std::move(url)),
        display_(std::move(display)),
        size_(size),
        version_(version) {}
  ~RemoteSource() override {
    std::lock_guard lock(mu_);
    for (auto& [offset, p] : pending_) release(*p);
  }

  const std::string& name() const override { return display_; }
  uint64_t size() const override { return size_; }

  void read(uint64_t offset, size_t size, unsigned char* out,
            std::optional<uint64_t> block) const override {
    std::shared_ptr<Pending> p;
    {
      std::lock_guard lock(mu_);
      auto it = pending_.find(offset);
      if (it != pending_.end() && it->second->size == size) {
        p = it->second;
        pending_.erase(it);  // read once: a later read (a refetch, a new epoch) goes out again
      }
    }
    if (p) {
      bool mine = false;
      {
        std::lock_guard lock(mu_);
        mine = !p->started;
        p->started = true;
      }
      if (!mine) {
        // In flight on a pool thread: wait for it; if it failed, fetch here (with retries).
        p->done.wait();
        std::lock_guard lock(mu_);
        if (p->ok) {
          std::memcpy(out, p->bytes.data(), size);
          release(*p);
          if (shared_->cache) shared_->cache->mark_consumed(cache_key(offset, size));
          return;
        }
      }
      std::lock_guard lock(mu_);
      release(*p);
    }
    {
      // Marked before the fetch, so that a prefetch arriving meanwhile does not fetch it too.
      std::lock_guard lock(mu_);
      if (served_.size() > 65536) served_.clear();  // bounded: a forgotten entry costs lookahead
      served_.insert(offset);
    }
    const std::string key = cache_key(offset, size);
    if (shared_->cache && shared_->cache->get(key, size, out, true)) return;
    shared_->transport.get_range(url_, display_, offset, size, out, block);
    if (shared_->cache) shared_->cache->put(key, out, size, true);
  }

  bool refetch(uint64_t offset, size_t size, unsigned char* out,
               std::optional<uint64_t> block) const override {
    shared_->transport.get_range(url_, display_, offset, size, out, block);
    if (shared_->cache) shared_->cache->put(cache_key(offset, size), out, size, true);
    return true;
  }

  void prefetch(uint64_t offset, size_t size) const override {
    auto p = std::make_shared<Pending>();
    p->size = size;
    {
      std::lock_guard lock(mu_);
      if (pending_.count(offset)) return;
      // Read before its prefetch got here (a queued readahead): fetching it again would be
      // wasted, and if it is read once more (a later epoch), that read fetches it.
      if (served_.erase(offset)) return;
      // Over the memory bound the block is simply fetched when read.
      if (shared_->held_bytes.fetch_add(size) + size > shared_->held_limit) {
        shared_->held_bytes.fetch_sub(size);
        return;
      }
      p->held = true;
      pending_.emplace(offset, p);
    }
    p->done = p->finished.get_future().share();
    if (TaskPool::on_pool_thread()) {  // e.g. the loader's readahead of a block: fetch it now
      run_prefetch(*p, offset, size);
      return;
    }
    std::weak_ptr<const RemoteSource> self = shared_from_this();
    shared_->pool.post([self, p, offset, size] {
      auto source = self.lock();
      if (!source) return;
      source->run_prefetch(*p, offset, size);
    });
  }

 private:
  struct Pending {
    size_t size = 0;
    bool started = false;  // a pool thread or a reader has taken it
    bool ok = false;
    bool held = false;  // counted in held_bytes
    std::vector<unsigned char> bytes;
    std::promise<void> finished;
    std::shared_future<void> done;
  };

  std::string cache_key(uint64_t offset, size_t size) const {
    return DiskCache::key(url_, version_, offset, size);
  }

  void release(Pending& p) const {
    if (p.held) shared_->held_bytes.fetch_sub(p.size);
    p.held = false;
    p.bytes = {};
  }

  void run_prefetch(Pending& p, uint64_t offset, size_t size) const {
    {
      std::lock_guard lock(mu_);
      if (p.started) return;  // a reader got there first
      p.started = true;
    }
    std::vector<unsigned char> bytes(size);
    bool ok = false;
    const std::string key = cache_key(offset, size);
    try {
      if (shared_->cache && shared_->cache->get(key, size, bytes.data(), false)) {
        ok = true;
      } else {
        shared_->transport.get_range(url_, display_, offset, size, bytes.data(), std::nullopt,
                                     false);
        if (shared_->cache) shared_->cache->put(key, bytes.data(), size, false);
        ok = true;
      }
    } catch (...) {
    }
    {
      std::lock_guard lock(mu_);
      p.ok = ok;
      if (ok && p.held) p.bytes = std::move(bytes);
    }
    p.finished.set_value();
  }

  std::shared_ptr<Shared> shared_;
  std::string url_, display_;
  uint64_t size_, version_;
  mutable std::mutex mu_;
  mutable std::map<uint64_t, std::shared_ptr<Pending>> pending_;
  mutable std::unordered_set<uint64_t> served_;  // read directly, not yet asked for ahead
};

// A BlockSource owned by a ShardFile (unique_ptr) that forwards to a shared RemoteSource, which
// prefetch tasks keep alive through weak pointers.
class OwnedSource : public BlockSource {
 public:
  explicit OwnedSource(std::shared_ptr<RemoteSource> s) : s_(std::move(s)) {}
  const std::string& name() const override { return s_->name(); }
  uint64_t size() const override { return s_->size(); }
  void read(uint64_t o, size_t n, unsigned char* out, std::optional<uint64_t> b) const override {
    s_->read(o, n, out, b);
  }
  bool refetch(uint64_t o, size_t n, unsigned char* out, std::optional<uint64_t> b) const override {
    return s_->refetch(o, n, out, b);
  }
  void prefetch(uint64_t o, size_t n) const override { s_->prefetch(o, n); }

 private:
  std::shared_ptr<RemoteSource> s_;
};

class RemoteStore : public DatasetStore {
 public:
  RemoteStore(std::string location, std::string base_url, std::shared_ptr<Shared> shared)
      : location_(std::move(location)), base_url_(std::move(base_url)), shared_(std::move(shared)) {
    while (!location_.empty() && location_.back() == '/') location_.pop_back();
    while (!base_url_.empty() && base_url_.back() == '/') base_url_.pop_back();
  }
  const std::string& location() const override { return location_; }

  Manifest load_manifest() const override {
    const std::string name = std::string(format::kManifestName);
    const std::string display = location_ + "/" + name;
    // A manifest damaged on the way is fetched once more before it is called corrupt.
    for (int attempt = 0;; ++attempt) {
      const std::string text = shared_->transport.get(base_url_ + "/" + name, display);
      try {
        return Manifest::parse(text, display);
      } catch (const Error& e) {
        if (e.code() != ErrorCode::kCorrupt || attempt > 0) throw;
      }
    }
  }

  std::unique_ptr<BlockSource> open_shard(const ShardEntry& shard) const override {
    auto source =
        std::make_shared<RemoteSource>(shared_, base_url_ + "/" + shard.name,
                                       location_ + "/" + shard.name, shard.bytes, shard.checksum);
    return std::make_unique<OwnedSource>(std::move(source));
  }

  void run_async(std::function<void()> task) const override { shared_->pool.post(std::move(task)); }

  void begin_epoch(uint64_t epoch) const override {
    if (shared_->cache) shared_->cache->set_epoch(epoch);
  }

  IoStats io_stats() const override {
    IoStats s;
    const TransportStats t = shared_->transport.stats();
    s.requests = t.requests;
    s.bytes_fetched = t.bytes;
    s.retries = t.retries;
    if (shared_->cache) {
      const CacheStats c = shared_->cache->stats();
      s.cache_hits = c.hits;
      s.cache_write_failures = c.write_failures;
      s.cache_evictions = c.evicted_files;
    }
    return s;
  }

 private:
  std::string location_, base_url_;
  std::shared_ptr<Shared> shared_;
};

}  // namespace

std::shared_ptr<DatasetStore> open_remote_store(const std::string& location,
                                                const SourceOptions& options) {
  if (location_scheme(location) == Scheme::kS3) {
    const S3Location s3 = parse_s3_location(location);
    auto shared = std::make_shared<Shared>(options, load_aws_signing(location));
    return std::make_shared<RemoteStore>(location, s3.base_url, std::move(shared));
  }
  auto shared = std::make_shared<Shared>(options, std::nullopt);
  return std::make_shared<RemoteStore>(location, location, std::move(shared));
}

}  // namespace shardkit::remote
