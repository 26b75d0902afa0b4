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
#include "core/remote/per_process.h"
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

// The transport, the disk cache and the prefetch threads of one store, in one process (a child
// after fork() makes its own: per_process.h).
struct Shared {
  std::shared_ptr<Interrupt> stop;  // set when the store closes; watches options.interrupt
  SourceOptions options;            // its interrupt: `stop`
  HttpTransport transport;
  std::unique_ptr<DiskCache> cache;
  // Prefetched bytes held in memory (no disk cache, or not yet read): bounded.
  std::atomic<uint64_t> held_bytes{0};
  uint64_t held_limit;
  TaskPool pool;  // last: its threads stop before the rest goes

  Shared(const SourceOptions& o, const std::optional<AwsSigning>& signing)
      : stop(std::make_shared<Interrupt>(o.interrupt)),
        options(watching(o, stop)),
        transport(options, signing),
        cache(o.cache_dir.empty() ? nullptr
                                  : std::make_unique<DiskCache>(o.cache_dir, o.cache_limit)),
        held_limit(o.prefetch_bytes ? o.prefetch_bytes : 256ull << 20),
        pool(std::max(1u, o.remote_concurrency)) {}
  // Transfers in flight end within Interrupt::kPoll, so the pool's threads join promptly.
  ~Shared() { stop->set(); }

  static SourceOptions watching(SourceOptions o, std::shared_ptr<Interrupt> stop) {
    o.interrupt = std::move(stop);
    return o;
  }
};

using Remote = PerProcess<Shared>;

class RemoteSource : public BlockSource, public std::enable_shared_from_this<RemoteSource> {
 public:
  RemoteSource(std::shared_ptr<Remote> remote, std::string url, std::string display, uint64_t size,
               uint64_t version)
      : remote_(std::move(remote)),
        url_(std::move(url)),
        display_(std::move(display)),
        size_(size),
        version_(version),
        state_([] { return std::make_unique<State>(); }) {}
  ~RemoteSource() override {
    State& st = state_.get();
    std::lock_guard lock(st.mu);
    for (auto& [offset, p] : st.pending) release(*p);
  }

  const std::string& name() const override { return display_; }
  uint64_t size() const override { return size_; }

  void read(uint64_t offset, size_t size, unsigned char* out,
            std::optional<uint64_t> block) const override {
    Shared& sh = remote_->get();
    if (read_pending(offset, size, out)) return;
    {
      // Marked before the fetch, so that a prefetch arriving meanwhile does not fetch it too.
      State& st = state_.get();
      std::lock_guard lock(st.mu);
      if (st.served.size() > 65536)
        st.served.clear();  // bounded: a forgotten entry costs lookahead
      st.served.insert(offset);
    }
    const std::string key = cache_key(offset, size);
    if (sh.cache && sh.cache->get(key, size, out, true)) return;
    sh.transport.get_range(url_, display_, offset, size, out, block, true, size_);
    if (sh.cache) sh.cache->put(key, out, size, true);
  }

  bool refetch(uint64_t offset, size_t size, unsigned char* out,
               std::optional<uint64_t> block) const override {
    Shared& sh = remote_->get();
    sh.transport.get_range(url_, display_, offset, size, out, block, true, size_);
    if (sh.cache) sh.cache->put(cache_key(offset, size), out, size, true);
    return true;
  }

  void prefetch(uint64_t offset, size_t size) const override {
    Shared& sh = remote_->get();
    State& st = state_.get();
    auto p = std::make_shared<Pending>();
    p->size = size;
    {
      std::lock_guard lock(st.mu);
      if (st.pending.count(offset)) return;
      // Read before its prefetch got here (a queued readahead): fetching it again would be
      // wasted, and if it is read once more (a later epoch), that read fetches it.
      if (st.served.erase(offset)) return;
      // Over the memory bound the block is simply fetched when read.
      if (sh.held_bytes.fetch_add(size) + size > sh.held_limit) {
        sh.held_bytes.fetch_sub(size);
        return;
      }
      p->held = true;
      st.pending.emplace(offset, p);
    }
    p->done = p->finished.get_future().share();
    if (TaskPool::on_pool_thread()) {  // e.g. the loader's readahead of a block: fetch it now
      run_prefetch(*p, offset, size);
      return;
    }
    std::weak_ptr<const RemoteSource> self = shared_from_this();
    sh.pool.post([self, p, offset, size] {
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
  // The prefetches of this process (a child's start empty).
  struct State {
    std::mutex mu;
    std::map<uint64_t, std::shared_ptr<Pending>> pending;
    std::unordered_set<uint64_t> served;  // read directly, not yet asked for ahead
  };

  // Without the URL's query: an access token in it may change between runs, the bytes not.
  std::string cache_key(uint64_t offset, size_t size) const {
    return DiskCache::key(url_.substr(0, url_.find('?')), version_, offset, size);
  }

  void release(Pending& p) const {
    if (p.held) remote_->get().held_bytes.fetch_sub(p.size);
    p.held = false;
    p.bytes = {};
  }

  // Serves the read from a prefetch of the same range, when one exists and succeeds (waiting
  // for it when it is in flight); false when the read must fetch the bytes itself.
  bool read_pending(uint64_t offset, size_t size, unsigned char* out) const {
    State& st = state_.get();
    std::shared_ptr<Pending> p;
    bool mine = false;
    {
      std::lock_guard lock(st.mu);
      auto it = st.pending.find(offset);
      if (it == st.pending.end() || it->second->size != size) return false;
      p = it->second;
      st.pending.erase(it);  // read once: a later read (a refetch, a new epoch) goes out again
      mine = !p->started;
      p->started = true;
    }
    if (!mine) {
      // In flight on a pool thread: wait for it; if it failed, fetch here (with retries).
      p->done.wait();
      std::lock_guard lock(st.mu);
      if (p->ok) {
        std::memcpy(out, p->bytes.data(), size);
        release(*p);
        Shared& sh = remote_->get();
        if (sh.cache) sh.cache->mark_consumed(cache_key(offset, size));
        return true;
      }
    }
    std::lock_guard lock(st.mu);
    release(*p);
    return false;
  }

  void run_prefetch(Pending& p, uint64_t offset, size_t size) const {
    Shared& sh = remote_->get();
    State& st = state_.get();
    {
      std::lock_guard lock(st.mu);
      if (p.started) return;  // a reader got there first
      p.started = true;
    }
    std::vector<unsigned char> bytes(size);
    bool ok = false;
    const std::string key = cache_key(offset, size);
    try {
      if (sh.cache && sh.cache->get(key, size, bytes.data(), false)) {
        ok = true;
      } else {
        sh.transport.get_range(url_, display_, offset, size, bytes.data(), std::nullopt, false,
                               size_);
        if (sh.cache) sh.cache->put(key, bytes.data(), size, false);
        ok = true;
      }
    } catch (...) {
    }
    {
      std::lock_guard lock(st.mu);
      p.ok = ok;
      if (ok && p.held) p.bytes = std::move(bytes);
    }
    p.finished.set_value();
  }

  std::shared_ptr<Remote> remote_;
  std::string url_, display_;
  uint64_t size_, version_;
  mutable PerProcess<State> state_;
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
  RemoteStore(std::string location, std::string base_url, std::shared_ptr<Remote> remote)
      : location_(without_secrets(location)),
        base_url_(std::move(base_url)),
        remote_(std::move(remote)) {
    while (!location_.empty() && location_.back() == '/') location_.pop_back();
  }
  const std::string& location() const override { return location_; }

  Manifest load_manifest() const override {
    const std::string name = std::string(format::kManifestName);
    const std::string display = object_url(location_, name);
    Shared& sh = remote_->get();
    const BodyLimit limit{sh.options.max_manifest_bytes, "max_manifest_bytes"};
    // A manifest damaged on the way is fetched once more before it is called corrupt.
    for (int attempt = 0;; ++attempt) {
      const std::string text = sh.transport.get(object_url(base_url_, name), display, limit);
      try {
        return Manifest::parse(text, display);
      } catch (const Error& e) {
        if (e.code() != ErrorCode::kCorrupt || attempt > 0) throw;
      }
    }
  }

  std::unique_ptr<BlockSource> open_shard(const ShardEntry& shard) const override {
    auto source = std::make_shared<RemoteSource>(remote_, object_url(base_url_, shard.name),
                                                 object_url(location_, shard.name), shard.bytes,
                                                 shard.checksum);
    return std::make_unique<OwnedSource>(std::move(source));
  }

  void run_async(std::function<void()> task) const override {
    remote_->get().pool.post(std::move(task));
  }

  void begin_epoch(uint64_t epoch) const override {
    Shared& sh = remote_->get();
    if (sh.cache) sh.cache->set_epoch(epoch);
  }

  IoStats io_stats() const override {
    IoStats s;
    const Shared& sh = remote_->get();
    const TransportStats t = sh.transport.stats();
    s.requests = t.requests;
    s.bytes_fetched = t.bytes;
    s.retries = t.retries;
    if (sh.cache) {
      const CacheStats c = sh.cache->stats();
      s.cache_hits = c.hits;
      s.cache_write_failures = c.write_failures;
      s.cache_evictions = c.evicted_files;
    }
    return s;
  }

 private:
  std::string location_, base_url_;
  std::shared_ptr<Remote> remote_;
};

}  // namespace

std::shared_ptr<DatasetStore> open_remote_store(const std::string& location,
                                                const SourceOptions& options) {
  std::optional<AwsSigning> signing;
  std::string base_url = location;
  if (location_scheme(location) == Scheme::kS3) {
    base_url = parse_s3_location(location).base_url;
    signing = load_aws_signing(location);
  }
  auto remote = std::make_shared<Remote>(
      [options, signing] { return std::make_unique<Shared>(options, signing); });
  return std::make_shared<RemoteStore>(location, base_url, std::move(remote));
}

}  // namespace shardkit::remote
