#include "core/dataset.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstring>
#include <exception>
#include <mutex>
#include <utility>
#include <vector>

#include "core/block_codec.h"
#include "core/dataset_store.h"
#include "core/error.h"
#include "core/shard_file.h"

namespace shardkit {

struct Dataset::Impl {
  std::filesystem::path dir;
  std::shared_ptr<Interrupt> interrupt;  // watched by the store's waits
  std::shared_ptr<DatasetStore> store;
  Manifest manifest;
  Geometry geometry;
  // A shard is opened on first use, by a read or a prefetch. A failed open is tried again by
  // the next read, so that a transient error does not poison the shard; but prefetches do not
  // try it again, and the read that waited for a prefetch's failed open gets that failure, so
  // that a server that never answers costs one request's retries, not one per block ahead.
  struct ShardSlot {
    std::mutex mu;
    std::unique_ptr<ShardFile> file;
    std::atomic<const ShardFile*> ready{nullptr};
    bool failed = false;                  // an open failed: no prefetch tries it again
    std::exception_ptr prefetch_failure;  // a prefetch's failed open, until a read reports it
  };
  std::unique_ptr<ShardSlot[]> shards;
  size_t shard_count = 0;
  mutable BlockCache cache;
  std::shared_ptr<BufferPool> block_buffers;  // null: blocks come from malloc
  // Prefetches running on the store's threads: the dataset waits for them before it goes, and
  // those still queued then find it closed.
  struct Async {
    std::mutex mu;
    std::condition_variable idle;
    int running = 0;
    bool closed = false;
  };
  std::shared_ptr<Async> async = std::make_shared<Async>();

  explicit Impl(size_t cache_bytes) : cache(cache_bytes) {}
  ~Impl() {
    std::unique_lock lock(async->mu);
    async->closed = true;
    async->idle.wait(lock, [&] { return async->running == 0; });
  }
};

Dataset::Dataset(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Dataset::Dataset(Dataset&&) noexcept = default;
Dataset& Dataset::operator=(Dataset&&) noexcept = default;
Dataset::~Dataset() = default;

Dataset Dataset::open(const std::filesystem::path& dir, DatasetOptions options) {
  return open(dir.string(), std::move(options));
}

Dataset Dataset::open(const char* location, DatasetOptions options) {
  return open(std::string(location), std::move(options));
}

Dataset Dataset::open(const std::string& location, DatasetOptions options) {
  auto impl = std::make_unique<Impl>(options.cache_bytes);
  if (options.idle_block_bytes) impl->block_buffers = BufferPool::create(options.idle_block_bytes);
  impl->dir = location;
  impl->interrupt = std::make_shared<Interrupt>(options.source.interrupt);
  options.source.interrupt = impl->interrupt;
  impl->store = open_store(location, options.source);
  impl->manifest = impl->store->load_manifest();
  const Manifest& m = impl->manifest;
  impl->geometry = Geometry::of(m);
  impl->shards = std::make_unique<Impl::ShardSlot[]>(m.shards.size());
  impl->shard_count = m.shards.size();
  return Dataset(std::move(impl));
}

const std::filesystem::path& Dataset::path() const { return impl_->dir; }
const Manifest& Dataset::manifest() const { return impl_->manifest; }
const DatasetInfo& Dataset::info() const { return impl_->manifest.info; }
const Schema& Dataset::schema() const { return impl_->manifest.schema; }
uint64_t Dataset::size() const { return impl_->geometry.records(); }
uint32_t Dataset::records_per_block() const { return impl_->manifest.records_per_block; }
uint64_t Dataset::block_count() const { return impl_->geometry.blocks(); }
const Geometry& Dataset::geometry() const { return impl_->geometry; }
BlockCache& Dataset::cache() const { return impl_->cache; }

RecordLocation Dataset::locate(uint64_t record) const {
  if (record >= size())
    throw Error(ErrorCode::kInvalidArgument, impl_->dir.string(),
                "record " + std::to_string(record) + " is out of range (dataset has " +
                    std::to_string(size()) + ")");
  return impl_->geometry.locate(record);
}

BlockRef Dataset::block_ref(uint64_t global_block) const {
  if (global_block >= block_count())
    throw Error(ErrorCode::kInvalidArgument, impl_->dir.string(),
                "block " + std::to_string(global_block) + " is out of range");
  return impl_->geometry.block_ref(global_block);
}

const ShardFile* Dataset::open_shard(Impl& d, uint32_t index, Opener opener) {
  if (index >= d.shard_count)
    throw Error(ErrorCode::kInvalidArgument, d.dir.string(), "no shard " + std::to_string(index));
  Impl::ShardSlot& slot = d.shards[index];
  if (const ShardFile* f = slot.ready.load(std::memory_order_acquire)) return f;
  std::lock_guard lock(slot.mu);
  if (slot.file) return slot.file.get();
  if (opener == Opener::kPrefetch && slot.failed) return nullptr;
  if (slot.prefetch_failure) std::rethrow_exception(std::exchange(slot.prefetch_failure, nullptr));
  const ShardEntry& e = d.manifest.shards[index];
  try {
    slot.file =
        ShardFile::open(d.store->open_shard(e), d.manifest.schema, d.manifest.records_per_block, e);
  } catch (...) {
    slot.failed = true;
    if (opener == Opener::kPrefetch) slot.prefetch_failure = std::current_exception();
    throw;
  }
  slot.ready.store(slot.file.get(), std::memory_order_release);
  return slot.file.get();
}

const ShardFile& Dataset::shard(uint32_t index) const {
  return *open_shard(*impl_, index, Opener::kRead);
}

std::shared_ptr<const DecodedBlock> Dataset::block(uint64_t global_block) const {
  block_ref(global_block);  // range check before anything is cached
  return impl_->cache.get(global_block, [&] { return decode_block(global_block); });
}

std::shared_ptr<const DecodedBlock> Dataset::decode_block(uint64_t global_block) const {
  const BlockRef ref = block_ref(global_block);
  const ShardFile& s = shard(ref.shard);
  thread_local BlockDecoder decoder;
  auto b = std::make_shared<DecodedBlock>();
  b->id = global_block;
  b->records = ref.records;
  b->record_size = static_cast<uint32_t>(schema().record_size());
  b->bytes = BufferPool::take(impl_->block_buffers, size_t{ref.records} * b->record_size);
  s.read_block(ref.block_in_shard, decoder, b->bytes.data());
  return b;
}

void Dataset::read(uint64_t index, void* out) const {
  const RecordLocation loc = locate(index);
  auto b = block(loc.global_block);
  std::memcpy(out, b->record(loc.slot), b->record_size);
}

bool Dataset::read_resident(uint64_t index, void* out) const {
  const RecordLocation loc = locate(index);
  const auto b = impl_->cache.find(loc.global_block);
  if (!b) return false;
  std::memcpy(out, b->record(loc.slot), b->record_size);
  return true;
}

void Dataset::prefetch(uint64_t global_block) const {
  const BlockRef ref = block_ref(global_block);
  // Opening a remote shard waits on the network: the store does it off this thread.
  Impl* impl = impl_.get();
  impl->store->run_async([impl, async = impl->async, ref] {
    {
      std::lock_guard lock(async->mu);
      if (async->closed) return;
      ++async->running;
    }
    try {
      if (const ShardFile* f = open_shard(*impl, ref.shard, Opener::kPrefetch))
        f->prefetch_block(ref.block_in_shard);
    } catch (...) {
      // A shard that fails to open is reported when its block is read, with its context.
    }
    std::lock_guard lock(async->mu);
    if (--async->running == 0) async->idle.notify_all();
  });
}

IoStats Dataset::io_stats() const { return impl_->store->io_stats(); }

void Dataset::begin_epoch(uint64_t epoch) const { impl_->store->begin_epoch(epoch); }

Interrupt& Dataset::interrupt() const { return *impl_->interrupt; }

std::optional<std::string> Dataset::metadata(const std::string& key) const {
  auto it = impl_->manifest.metadata.find(key);
  if (it == impl_->manifest.metadata.end()) return std::nullopt;
  return it->second;
}

}  // namespace shardkit
