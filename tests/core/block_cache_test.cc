// The one block cache: LRU for random access, pins for the loader's windows, one decode per
// block whoever asks.
#include <doctest/doctest.h>

#include <atomic>
#include <cstring>
#include <stdexcept>

#include "core/block_cache.h"

using namespace shardkit;

namespace {

BlockCache::BlockPtr make_block(uint64_t id, size_t bytes) {
  auto b = std::make_shared<DecodedBlock>();
  b->id = id;
  b->bytes = BufferPool::take(nullptr, bytes);
  std::memset(b->bytes.data(), static_cast<int>(id), bytes);
  return b;
}

}  // namespace

TEST_CASE("pinned blocks stay outside the LRU budget until their window is released") {
  BlockCache cache(0);
  auto c = cache.claim(7, {1, 3});
  REQUIRE(c.mine());
  cache.finish(7, c, make_block(7, 100));
  CHECK(cache.pinned_bytes() == 100);
  // Another claim in the same window shares the block: nobody decodes it again.
  auto again = cache.claim(7, {1, 3});
  CHECK_FALSE(again.mine());
  CHECK(again.block.get()->id == 7);
  // A random-access get finds it too, without calling the loader.
  CHECK(
      cache.get(7, []() -> BlockCache::BlockPtr { throw std::logic_error("decoded twice"); })->id ==
      7);
  cache.release_below(1, 3);  // window 3 is not below 3: kept
  CHECK(cache.resident_bytes() == 100);
  cache.release_below(1, 4);
  CHECK(cache.resident_bytes() == 0);  // capacity 0: an unpinned block is not kept
  CHECK(cache.claim(7, {1, 4}).mine());
}

TEST_CASE("a new generation releases the old one's pins; released blocks become LRU entries") {
  BlockCache cache(250);
  for (uint64_t id = 0; id < 3; ++id) {
    auto c = cache.claim(id, {1, 0});
    cache.finish(id, c, make_block(id, 100));
  }
  CHECK(cache.pinned_bytes() == 300);
  cache.release_below(2, 0);
  CHECK(cache.pinned_bytes() == 0);
  CHECK(cache.resident_bytes() == 200);  // two of three fit the LRU budget
}

TEST_CASE("a failed load reaches the waiters and caches nothing") {
  BlockCache cache(1 << 20);
  auto c = cache.claim(1, {1, 0});
  auto waiter = cache.claim(1, {1, 0});
  CHECK_FALSE(waiter.mine());
  cache.finish(1, c, std::make_exception_ptr(std::runtime_error("bad block")));
  CHECK_THROWS_AS(waiter.block.get(), std::runtime_error);
  std::atomic<int> loads{0};
  auto b = cache.get(1, [&] {
    ++loads;
    return make_block(1, 10);
  });
  CHECK(loads == 1);
  CHECK(cache
            .get(1,
                 [&] {
                   ++loads;
                   return make_block(1, 10);
                 })
            ->id == 1);
  CHECK(loads == 1);
}

TEST_CASE("a block released while it loads is delivered to its waiters but not kept") {
  BlockCache cache(0);
  auto c = cache.claim(5, {1, 0});
  cache.release_below(2, 0);
  cache.finish(5, c, make_block(5, 64));
  CHECK(c.block.get()->id == 5);
  CHECK(cache.resident_bytes() == 0);
}
