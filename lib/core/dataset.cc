#include "core/dataset.h"

#include <algorithm>
#include <cstring>
#include <mutex>
#include <vector>

#include "core/block_codec.h"
#include "core/error.h"
#include "core/shard_file.h"

namespace shardkit {

struct Dataset::Impl {
  std::filesystem::path dir;
  Manifest manifest;
  std::vector<uint64_t> record_start;  // per shard, plus a final total
  std::vector<uint64_t> block_start;   // per shard, plus a final total
  std::vector<std::unique_ptr<ShardFile>> shards;
  std::unique_ptr<std::once_flag[]> shard_once;
  // call_once retries after an exception, so a transient error does not poison a shard.
  BlockCache cache;

  explicit Impl(size_t cache_bytes) : cache(cache_bytes) {}

  uint32_t shard_of_block(uint64_t global_block) const {
    auto it = std::upper_bound(block_start.begin(), block_start.end(), global_block);
    return static_cast<uint32_t>(it - block_start.begin() - 1);
  }
};

Dataset::Dataset(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Dataset::Dataset(Dataset&&) noexcept = default;
Dataset& Dataset::operator=(Dataset&&) noexcept = default;
Dataset::~Dataset() = default;

Dataset Dataset::open(const std::filesystem::path& dir, DatasetOptions options) {
  auto impl = std::make_unique<Impl>(options.cache_bytes);
  impl->dir = dir;
  impl->manifest = Manifest::load(dir);
  const Manifest& m = impl->manifest;
  const uint64_t rpb = m.records_per_block;
  uint64_t records = 0, blocks = 0;
  for (const ShardEntry& s : m.shards) {
    impl->record_start.push_back(records);
    impl->block_start.push_back(blocks);
    records += s.records;
    blocks += (s.records + rpb - 1) / rpb;
  }
  impl->record_start.push_back(records);
  impl->block_start.push_back(blocks);
  impl->shards.resize(m.shards.size());
  impl->shard_once = std::make_unique<std::once_flag[]>(m.shards.size());
  return Dataset(std::move(impl));
}

const std::filesystem::path& Dataset::path() const { return impl_->dir; }
const Manifest& Dataset::manifest() const { return impl_->manifest; }
const DatasetInfo& Dataset::info() const { return impl_->manifest.info; }
const Schema& Dataset::schema() const { return impl_->manifest.schema; }
uint64_t Dataset::size() const { return impl_->record_start.back(); }
uint32_t Dataset::records_per_block() const { return impl_->manifest.records_per_block; }
uint64_t Dataset::block_count() const { return impl_->block_start.back(); }
const BlockCache& Dataset::cache() const { return impl_->cache; }

RecordLocation Dataset::locate(uint64_t record) const {
  if (record >= size())
    throw Error(ErrorCode::kInvalidArgument, impl_->dir.string(),
                "record " + std::to_string(record) + " is out of range (dataset has " +
                    std::to_string(size()) + ")");
  const auto& starts = impl_->record_start;
  // upper_bound skips empty shards, whose start equals the next one's.
  auto it = std::upper_bound(starts.begin(), starts.end(), record);
  RecordLocation loc;
  loc.shard = static_cast<uint32_t>(it - starts.begin() - 1);
  const uint64_t local = record - starts[loc.shard];
  const uint64_t rpb = records_per_block();
  loc.block_in_shard = local / rpb;
  loc.slot = static_cast<uint32_t>(local % rpb);
  loc.global_block = impl_->block_start[loc.shard] + loc.block_in_shard;
  return loc;
}

BlockRef Dataset::block_ref(uint64_t global_block) const {
  if (global_block >= block_count())
    throw Error(ErrorCode::kInvalidArgument, impl_->dir.string(),
                "block " + std::to_string(global_block) + " is out of range");
  BlockRef ref;
  ref.shard = impl_->shard_of_block(global_block);
  ref.block_in_shard = global_block - impl_->block_start[ref.shard];
  const uint64_t rpb = records_per_block();
  ref.first_record = impl_->record_start[ref.shard] + ref.block_in_shard * rpb;
  const uint64_t shard_records = impl_->manifest.shards[ref.shard].records;
  ref.records = static_cast<uint32_t>(std::min(rpb, shard_records - ref.block_in_shard * rpb));
  return ref;
}

const ShardFile& Dataset::shard(uint32_t index) const {
  Impl& d = *impl_;
  if (index >= d.shards.size())
    throw Error(ErrorCode::kInvalidArgument, d.dir.string(), "no shard " + std::to_string(index));
  std::call_once(d.shard_once[index], [&] {
    const ShardEntry& e = d.manifest.shards[index];
    d.shards[index] =
        ShardFile::open(d.dir / e.name, d.manifest.schema, d.manifest.records_per_block, e);
  });
  return *d.shards[index];
}

std::shared_ptr<const DecodedBlock> Dataset::block(uint64_t global_block) const {
  const BlockRef ref = block_ref(global_block);
  return impl_->cache.get(global_block, [&]() -> std::shared_ptr<const DecodedBlock> {
    const ShardFile& s = shard(ref.shard);
    thread_local BlockDecoder decoder;
    auto b = std::make_shared<DecodedBlock>();
    b->id = global_block;
    b->records = ref.records;
    b->record_size = static_cast<uint32_t>(schema().record_size());
    b->bytes.resize(size_t{ref.records} * b->record_size);
    s.read_block(ref.block_in_shard, decoder, b->bytes.data());
    return b;
  });
}

void Dataset::read(uint64_t index, void* out) const {
  const RecordLocation loc = locate(index);
  auto b = block(loc.global_block);
  std::memcpy(out, b->record(loc.slot), b->record_size);
}

void Dataset::prefetch(uint64_t global_block) const {
  const BlockRef ref = block_ref(global_block);
  shard(ref.shard).prefetch_block(ref.block_in_shard);
}

std::optional<std::string> Dataset::metadata(const std::string& key) const {
  auto it = impl_->manifest.metadata.find(key);
  if (it == impl_->manifest.metadata.end()) return std::nullopt;
  return it->second;
}

}  // namespace shardkit
