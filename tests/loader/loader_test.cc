// The loader delivers exactly what the plan says, with the data of those records, the same
// stream at any thread count, resumes exactly, and reports damaged data as errors.
#include <doctest/doctest.h>

#include <algorithm>
#include <fstream>
#include <random>
#include <set>
#include <thread>

#include "core/dataset_writer.h"
#include "core/error.h"
#include "core/manifest.h"
#include "core/shard_file.h"
#include "loader/loader.h"
#include "loader_fixture.h"
#include "test_util.h"

using namespace shardkit;
using namespace shardkit::loader;
using shardkit::testing::TempDir;
namespace t = shardkit::testing;

namespace {

// Each batch flattened to (record, length, first input id after [CLS]) per row.
std::vector<std::vector<uint64_t>> drain(Loader& loader, size_t max_batches = SIZE_MAX) {
  std::vector<std::vector<uint64_t>> out;
  while (out.size() < max_batches) {
    auto b = loader.next();
    if (!b) break;
    out.push_back(b->records);
  }
  return out;
}

// Checks every column of a batch against the fixture's formulas.
void check_contents(const Batch& b, uint32_t multiple = 1) {
  const Column& ids = b.at("input_ids");
  const Column& len = b.at("length");
  const Column& labels = b.at("labels");
  const Column& mask = b.at("attention_mask");
  REQUIRE(ids.dtype() == DType::kI64);
  const int64_t t_len = ids.shape()[1];
  uint64_t longest = 0;
  for (size_t r = 0; r < b.size(); ++r) {
    const uint64_t rec = b.records[r];
    longest = std::max<uint64_t>(longest, t::fixture_length(rec));
    REQUIRE(labels.get(r) == static_cast<int64_t>(rec));
    REQUIRE(len.get(r) == t::fixture_length(rec));
    for (int64_t j = 0; j < t_len; ++j) {
      REQUIRE(ids.get(r * t_len + j) == t::fixture_token(rec, static_cast<uint32_t>(j)));
      REQUIRE(mask.get(r * t_len + j) == (j < t::fixture_length(rec) ? 1 : 0));
    }
  }
  const uint64_t expect =
      std::min<uint64_t>((longest + multiple - 1) / multiple * multiple, t::kSeqLen);
  CHECK(static_cast<uint64_t>(t_len) == expect);
}

}  // namespace

TEST_CASE("batches hold the planned records with their stored values, dynamically padded") {
  TempDir tmp("ld");
  t::write_fixture(tmp / "ds", {.records = 777, .block_bytes = 2000, .shard_bytes = 5000});
  for (uint32_t multiple : {1u, 8u}) {
    LoaderOptions o;
    o.batch_size = 16;
    o.seed = 42;
    o.threads = 2;
    o.window_blocks = 3;
    o.pad_to_multiple_of = multiple;
    o.include_metadata = true;  // check_contents reads the stored length too
    Loader loader(tmp / "ds", o);
    std::vector<char> seen(777, 0);
    uint64_t i = 0;
    while (auto b = loader.next()) {
      CHECK(b->records == loader.planned_records(i));
      CHECK(b->index == i);
      check_contents(*b, multiple);
      for (uint64_t r : b->records) seen[r] = 1;
      ++i;
    }
    CHECK(i == loader.batches());
    CHECK(i == (777 + 15) / 16);
    CHECK(std::count(seen.begin(), seen.end(), 1) == 777);
    CHECK(!loader.next());  // stays exhausted
  }
}

TEST_CASE("shuffle=false reads records in order; int32 and kept dtypes") {
  TempDir tmp("ld");
  t::write_fixture(tmp / "ds", {.records = 100});
  LoaderOptions o;
  o.batch_size = 30;
  o.shuffle = false;
  o.int_output = IntOutput::kInt32;
  o.dynamic_padding = false;
  Loader loader(tmp / "ds", o);
  uint64_t expect = 0;
  while (auto b = loader.next()) {
    CHECK(b->at("input_ids").dtype() == DType::kI32);
    CHECK(b->at("input_ids").shape()[1] == t::kSeqLen);
    for (uint64_t r : b->records) CHECK(r == expect++);
  }
  CHECK(expect == 100);
  o.int_output = IntOutput::kKeep;
  Loader keep(tmp / "ds", o);
  auto b = keep.next();
  CHECK(b->at("input_ids").dtype() == DType::kU16);
  CHECK(b->at("labels").dtype() == DType::kI64);
}

TEST_CASE("token_type_ids derive from length_a; a transform hook runs on every batch") {
  TempDir tmp("ld");
  t::write_fixture(tmp / "ds", {.records = 200, .with_length_a = true});
  LoaderOptions o;
  o.batch_size = 7;
  o.transforms.push_back([](Batch& b) {
    Column c("twice_labels", DType::kI64, {static_cast<int64_t>(b.size())});
    for (size_t i = 0; i < b.size(); ++i) c.set(i, 2 * b.at("labels").get(i));
    b.columns.push_back(std::move(c));
  });
  Loader loader(tmp / "ds", o);
  while (auto b = loader.next()) {
    const Column& types = b->at("token_type_ids");
    const int64_t t_len = types.shape()[1];
    for (size_t r = 0; r < b->size(); ++r) {
      const uint64_t rec = b->records[r];
      CHECK(b->at("twice_labels").get(r) == 2 * static_cast<int64_t>(rec));
      for (int64_t j = 0; j < t_len; ++j) {
        const int64_t expect = j >= t::fixture_length_a(rec) && j < t::fixture_length(rec);
        REQUIRE(types.get(r * t_len + j) == expect);
      }
    }
  }
}

TEST_CASE("the stream does not depend on the number of loader threads") {
  TempDir tmp("ld");
  t::write_fixture(tmp / "ds", {.records = 1500, .block_bytes = 3000, .shard_bytes = 20000});
  std::vector<std::vector<uint64_t>> reference;
  for (unsigned threads : {1u, 2u, 3u, 8u}) {
    LoaderOptions o;
    o.batch_size = 24;
    o.seed = 9;
    o.threads = threads;
    o.window_blocks = 5;
    Loader loader(tmp / "ds", o);
    loader.set_epoch(3);
    auto got = drain(loader);
    if (reference.empty()) reference = got;
    CHECK(got == reference);
  }
}

TEST_CASE("resuming at random positions gives the uninterrupted stream") {
  TempDir tmp("ld");
  t::write_fixture(tmp / "ds", {.records = 1000, .block_bytes = 3000, .shard_bytes = 30000});
  LoaderOptions o;
  o.batch_size = 8;
  o.world_size = 2;
  o.rank = 1;
  o.seed = 123;
  o.window_blocks = 4;
  o.threads = 2;
  std::vector<std::vector<uint64_t>> whole;
  {
    Loader loader(tmp / "ds", o);
    loader.set_epoch(1);
    whole = drain(loader);
  }
  std::mt19937_64 rng(1);
  for (int trial = 0; trial < 6; ++trial) {
    const size_t cut = rng() % whole.size();
    LoaderState saved;
    std::vector<std::vector<uint64_t>> got;
    {
      o.threads = 1 + trial % 3;
      Loader first(tmp / "ds", o);
      first.set_epoch(1);
      got = drain(first, cut);
      saved = first.state();
    }
    CHECK(saved.epoch == 1);
    CHECK(saved.seed == 123);
    CHECK(saved.samples_consumed == cut * 16);
    o.threads = 3 - trial % 3;
    Loader second(tmp / "ds", o);
    second.restore(saved);
    auto rest = drain(second);
    got.insert(got.end(), rest.begin(), rest.end());
    CHECK(got == whole);
  }
}

TEST_CASE("a run resumed with another world size and the same global batch continues the stream") {
  TempDir tmp("ld");
  t::write_fixture(tmp / "ds", {.records = 600, .block_bytes = 3000});
  auto run = [&](uint32_t world, uint64_t batch, const LoaderState* from, size_t steps) {
    std::vector<std::unique_ptr<Loader>> ranks;
    for (uint32_t r = 0; r < world; ++r) {
      LoaderOptions o;
      o.batch_size = batch;
      o.world_size = world;
      o.rank = r;
      o.seed = 5;
      o.window_blocks = 6;
      o.drop_last = true;
      ranks.push_back(std::make_unique<Loader>(tmp / "ds", o));
      if (from) ranks.back()->restore(*from);
    }
    std::vector<std::vector<uint64_t>> global_steps;
    for (size_t s = 0; s < steps; ++s) {
      std::vector<uint64_t> step;
      for (auto& l : ranks) {
        auto b = l->next();
        if (!b) return std::make_pair(global_steps, ranks[0]->state());
        step.insert(step.end(), b->records.begin(), b->records.end());
      }
      global_steps.push_back(step);
    }
    return std::make_pair(global_steps, ranks[0]->state());
  };
  const auto [whole, end_state] = run(2, 12, nullptr, 1000);
  CHECK(whole.size() == 600 / 24);
  const auto [head, mid] = run(2, 12, nullptr, 7);
  CHECK(mid.samples_consumed == 7 * 24);
  const auto [tail, end2] = run(4, 6, &mid, 1000);
  REQUIRE(head.size() + tail.size() == whole.size());
  for (size_t i = 0; i < tail.size(); ++i) CHECK(tail[i] == whole[7 + i]);
}

TEST_CASE("a damaged block surfaces as an error naming the shard file and block") {
  TempDir tmp("ld");
  t::write_fixture(tmp / "ds", {.records = 500, .block_bytes = 2000, .shard_bytes = 1 << 20});
  const Manifest m = Manifest::load(tmp / "ds");
  const auto shard_path = tmp / "ds" / m.shards[0].name;
  uint64_t offset = 0;
  {
    auto shard = ShardFile::open(shard_path, m.schema, m.records_per_block, m.shards[0]);
    offset = shard->index_entry(3).offset + shard->index_entry(3).stored_size / 2;
  }
  {
    std::fstream f(shard_path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(static_cast<std::streamoff>(offset));
    char c;
    f.get(c);
    f.seekp(static_cast<std::streamoff>(offset));
    f.put(static_cast<char>(c ^ 0x5a));
  }
  for (bool shuffle : {true, false}) {
    LoaderOptions o;
    o.batch_size = 10;
    o.shuffle = shuffle;
    o.threads = 2;
    Loader loader(tmp / "ds", o);
    bool thrown = false;
    try {
      while (loader.next()) {
      }
    } catch (const Error& e) {
      thrown = true;
      CHECK(e.code() == ErrorCode::kCorrupt);
      CHECK(e.file().find(m.shards[0].name) != std::string::npos);
      REQUIRE(e.block().has_value());
      CHECK(*e.block() == 3);
      CHECK(std::string(e.what()).find(m.shards[0].name) != std::string::npos);
      // Asking again gives the same error rather than skipping data.
      CHECK_THROWS_AS(loader.next(), Error);
    }
    CHECK(thrown);
  }
}

TEST_CASE("a batch that takes longer than the timeout raises kTimeout") {
  TempDir tmp("ld");
  t::write_fixture(tmp / "ds", {.records = 50});
  LoaderOptions o;
  o.batch_size = 10;
  o.threads = 1;
  o.timeout = std::chrono::milliseconds(50);
  o.transforms.push_back(
      [](Batch&) { std::this_thread::sleep_for(std::chrono::milliseconds(400)); });
  Loader loader(tmp / "ds", o);
  try {
    loader.next();
    FAIL("expected a timeout");
  } catch (const Error& e) {
    CHECK(e.code() == ErrorCode::kTimeout);
  }
}

TEST_CASE("bad options are refused with a reason") {
  TempDir tmp("ld");
  t::write_fixture(tmp / "ds", {.records = 50});
  LoaderOptions o;
  o.rank = 2;
  o.world_size = 2;
  CHECK_THROWS_AS(Loader(tmp / "ds", o), Error);
  o = {};
  o.fields = {"no_such_field"};
  CHECK_THROWS_AS(Loader(tmp / "ds", o), Error);
  o = {};
  o.mlm.enabled = true;  // no mask id, and labels is stored
  CHECK_THROWS_AS(Loader(tmp / "ds", o), Error);
}

TEST_CASE("shardify's pair layout: stored u8 token_type_ids and u16 position_ids are trimmed too") {
  // input_ids u16[L], token_type_ids u8[L], position_ids u16[L], length u32, labels i32.
  TempDir tmp("ld");
  const uint32_t L = 40;
  Schema schema({{"input_ids", DType::kU16, {L}},
                 {"token_type_ids", DType::kU8, {L}},
                 {"position_ids", DType::kU16, {L}},
                 {"length", DType::kU32, {}},
                 {"labels", DType::kI32, {}}});
  {
    DatasetWriter w(tmp / "ds", schema);
    std::vector<unsigned char> rec(schema.record_size());
    for (uint32_t i = 0; i < 100; ++i) {
      std::fill(rec.begin(), rec.end(), 0);
      const uint32_t len = 2 + i % 30;
      for (uint32_t j = 0; j < len; ++j) {
        const uint16_t id = static_cast<uint16_t>(1000 + i + j);
        std::memcpy(rec.data() + schema.at("input_ids").offset + 2 * j, &id, 2);
        rec[schema.at("token_type_ids").offset + j] = j >= len / 2;
        const uint16_t pos = static_cast<uint16_t>(j);
        std::memcpy(rec.data() + schema.at("position_ids").offset + 2 * j, &pos, 2);
      }
      std::memcpy(rec.data() + schema.at("length").offset, &len, 4);
      const int32_t label = static_cast<int32_t>(i % 3) - 1;
      std::memcpy(rec.data() + schema.at("labels").offset, &label, 4);
      w.append(rec.data());
    }
    w.finish();
  }
  LoaderOptions o;
  o.batch_size = 9;
  o.include_metadata = true;
  Loader loader(tmp / "ds", o);
  uint64_t rows = 0;
  while (auto b = loader.next()) {
    const int64_t t_len = b->at("input_ids").shape()[1];
    for (const char* name : {"input_ids", "token_type_ids", "position_ids", "attention_mask"}) {
      CHECK(b->at(name).dtype() == DType::kI64);
      CHECK(b->at(name).shape() == std::vector<int64_t>{static_cast<int64_t>(b->size()), t_len});
    }
    int64_t longest = 0;
    for (size_t r = 0; r < b->size(); ++r) {
      const uint64_t i = b->records[r];
      const int64_t len = 2 + static_cast<int64_t>(i % 30);
      longest = std::max(longest, len);
      CHECK(b->at("length").get(r) == len);
      CHECK(b->at("labels").get(r) == static_cast<int64_t>(i % 3) - 1);  // sign kept
      for (int64_t j = 0; j < t_len; ++j) {
        const size_t at = r * static_cast<size_t>(t_len) + static_cast<size_t>(j);
        CHECK(b->at("input_ids").get(at) == (j < len ? 1000 + static_cast<int64_t>(i) + j : 0));
        CHECK(b->at("token_type_ids").get(at) == (j < len && j >= len / 2 ? 1 : 0));
        CHECK(b->at("position_ids").get(at) == (j < len ? j : 0));
        CHECK(b->at("attention_mask").get(at) == (j < len ? 1 : 0));
      }
    }
    CHECK(t_len == longest);
    rows += b->size();
  }
  CHECK(rows == 100);
}

TEST_CASE("loaders for world sizes 1, 2, 3, 8: disjoint shares covering the epoch, equal steps") {
  TempDir tmp("ld");
  t::write_fixture(tmp / "ds", {.records = 1001, .block_bytes = 2500, .shard_bytes = 15000});
  for (uint32_t world : {1u, 2u, 3u, 8u}) {
    for (bool drop_last : {false, true}) {
      CAPTURE(world);
      CAPTURE(drop_last);
      std::vector<int> seen(1001, 0);
      std::set<uint64_t> steps;
      uint64_t rows = 0;
      for (uint32_t rank = 0; rank < world; ++rank) {
        LoaderOptions o;
        o.batch_size = 10;
        o.world_size = world;
        o.rank = rank;
        o.drop_last = drop_last;
        o.seed = 4;
        o.threads = 2;
        o.window_blocks = 7;
        Loader loader(tmp / "ds", o);
        loader.set_epoch(2);
        uint64_t n = 0;
        while (auto b = loader.next()) {
          ++n;
          for (uint64_t r : b->records) ++seen[r];
          rows += b->size();
        }
        CHECK(n == loader.batches());
        steps.insert(n);
      }
      CHECK(steps.size() == 1);  // every rank runs the same number of steps
      const uint64_t global = 10 * world;
      if (drop_last) {
        CHECK(rows == 1001 / global * global);
        CHECK(*std::max_element(seen.begin(), seen.end()) == 1);
      } else {
        CHECK(*std::min_element(seen.begin(), seen.end()) >= 1);
        CHECK(rows - 1001 < world);  // padding repeats fewer than world_size records
        CHECK(*steps.begin() == (1001 + global - 1) / global);
      }
    }
  }
}

TEST_CASE("restore refuses samples_consumed past the epoch's end, naming the field and range") {
  TempDir tmp("ld");
  t::write_fixture(tmp / "ds", {.records = 300, .block_bytes = 3000});
  Loader loader(tmp / "ds", LoaderOptions{});
  CHECK_NOTHROW(loader.restore({0, 1, 300}));  // the end itself: an exhausted epoch
  CHECK(loader.next() == nullptr);
  try {
    loader.restore({0, 1, 301});
    FAIL("restore accepted a position past the epoch's end");
  } catch (const Error& e) {
    CHECK(e.code() == ErrorCode::kInvalidArgument);
    CHECK(std::string(e.what()).find("samples_consumed 301") != std::string::npos);
    CHECK(std::string(e.what()).find("0..300") != std::string::npos);
  }
}

TEST_CASE("restore refuses a state of other data, another order or seed, naming both") {
  TempDir tmp("ld");
  t::write_fixture(tmp / "ds", {.records = 400, .block_bytes = 3000});
  t::write_fixture(tmp / "other", {.records = 400, .block_bytes = 3000, .label_base = 5});
  LoaderOptions o;
  o.batch_size = 8;
  o.seed = 7;
  o.window_blocks = 4;
  Loader saved_from(tmp / "ds", o);
  saved_from.next();
  const LoaderState saved = saved_from.state();
  REQUIRE(saved.fingerprint.size() == 33);
  // The same data read from a copy in another place is the same stream.
  std::filesystem::copy(tmp / "ds", tmp / "copy");
  Loader copy(tmp / "copy", o);
  CHECK_NOTHROW(copy.restore(saved));
  CHECK(copy.next()->records == saved_from.next()->records);
  auto refused = [&](const std::filesystem::path& dir, const LoaderOptions& opts,
                     const LoaderState& state, const std::string& why) {
    Loader l(dir, opts);
    try {
      l.restore(state);
      FAIL("restore accepted a state it cannot continue: " << why);
    } catch (const Error& e) {
      const std::string what = e.what();
      CAPTURE(what);
      CHECK(e.code() == ErrorCode::kInvalidArgument);
      CHECK(what.find(why) != std::string::npos);
      if (opts.seed != state.seed) return;  // both seeds named instead
      CHECK(what.find(state.fingerprint) != std::string::npos);
      CHECK(what.find(l.state().fingerprint) != std::string::npos);
    }
  };
  // Other data (same geometry, other records), another window, another seed.
  refused(tmp / "other", o, saved, "other data");
  LoaderOptions wider = o;
  wider.window_blocks = 5;
  refused(tmp / "ds", wider, saved, "window_blocks");
  LoaderOptions reseeded = o;
  reseeded.seed = 8;
  refused(tmp / "ds", reseeded, saved, "seed 7, this loader has seed 8");
  // Budgets, drop_last, world size and batch size may change.
  LoaderOptions elastic = o;
  elastic.batch_size = 5;
  elastic.world_size = 2;
  elastic.rank = 1;
  elastic.drop_last = true;
  elastic.max_samples = 300;
  CHECK_NOTHROW(Loader(tmp / "ds", elastic).restore(saved));
  // A state saved before fingerprints were recorded: accepted, and its seed adopted.
  LoaderState legacy = saved;
  legacy.fingerprint.clear();
  Loader old(tmp / "other", reseeded);
  CHECK_NOTHROW(old.restore(legacy));
  CHECK(old.state().seed == 7);
}

TEST_CASE("rank and world size left unset come from RANK and WORLD_SIZE") {
  TempDir tmp("ld");
  t::write_fixture(tmp / "ds", {.records = 500, .block_bytes = 3000});
  LoaderOptions given;
  given.batch_size = 8;
  given.rank = 2;
  given.world_size = 3;
  Loader explicit_loader(tmp / "ds", given);
  const auto expected = drain(explicit_loader);
  ::setenv("RANK", "2", 1);
  ::setenv("WORLD_SIZE", "3", 1);
  LoaderOptions unset;
  unset.batch_size = 8;
  Loader from_env(tmp / "ds", unset);
  CHECK(from_env.options().rank == 2);
  CHECK(from_env.options().world_size == 3);
  CHECK(drain(from_env) == expected);
  LoaderOptions single = unset;
  single.rank = 0;
  single.world_size = 1;  // given: the environment does not override it
  Loader one(tmp / "ds", single);
  CHECK(one.batches() == (500 + 7) / 8);
  ::setenv("RANK", "two", 1);
  CHECK_THROWS_WITH_AS(Loader(tmp / "ds", unset), doctest::Contains("RANK='two'"), Error);
  ::unsetenv("RANK");
  ::unsetenv("WORLD_SIZE");
  Loader alone(tmp / "ds", unset);
  CHECK(alone.options().rank == 0);
  CHECK(alone.options().world_size == 1);
}
