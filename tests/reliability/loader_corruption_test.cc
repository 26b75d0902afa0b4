// The prefetching loader on damaged datasets: for a flip in every header field, the first and
// last byte of every block, the index and the footer of every shard, and in the manifest, the
// loader must stop with an error naming the file (and the block, for a byte inside one) rather
// than hang or hand out a wrong row; every row it returns before that must be what was written.
#include <doctest/doctest.h>

#include <cstdio>

#include "core/shard_file.h"
#include "loader/loader.h"
#include "reliability_util.h"

namespace shardkit::reliability {
namespace {

constexpr uint64_t kRecords = 100;

loader::LoaderOptions options() {
  loader::LoaderOptions o;
  o.batch_size = 7;
  o.shuffle = true;
  o.seed = 3;
  o.threads = 2;
  o.int_output = loader::IntOutput::kKeep;
  o.dynamic_padding = false;
  o.attention_mask = false;
  o.timeout = std::chrono::milliseconds(20000);  // a hang fails instead of stalling
  return o;
}

struct LoaderOutcome {
  std::optional<Error> error;
  uint64_t rows = 0;
  uint64_t wrong_rows = 0;
};

// One epoch, every row compared field by field with what was written.
LoaderOutcome run_epoch(const fs::path& dir) {
  LoaderOutcome out;
  const Schema schema = small_schema();
  std::vector<unsigned char> want(schema.record_size());
  try {
    loader::Loader l(dir, options());
    l.set_epoch(0);
    while (auto batch = l.next()) {
      for (size_t r = 0; r < batch->size(); ++r) {
        expected_record(schema, batch->records[r], kRecords, want.data());
        bool same = true;
        for (const Field& f : schema.fields()) {
          const auto* col = static_cast<const unsigned char*>(batch->at(f.name).data());
          if (std::memcmp(col + r * f.byte_size(), want.data() + f.offset, f.byte_size()) != 0)
            same = false;
        }
        ++out.rows;
        if (!same) ++out.wrong_rows;
      }
    }
  } catch (const Error& e) {
    out.error = e;
  }
  return out;
}

TEST_CASE("the loader stops with a named error on every sampled flip, never a wrong row") {
  testing::TempDir tmp("loader-corrupt");
  const fs::path dir = tmp / "ds";
  const Manifest m = write_small_dataset(dir, {.records = kRecords});
  {
    const LoaderOutcome clean = run_epoch(dir);
    REQUIRE_MESSAGE(!clean.error, clean.error->what());
    REQUIRE(clean.rows == kRecords);
    REQUIRE(clean.wrong_rows == 0);
  }
  uint64_t tried = 0, named = 0;
  auto flip = [&](const fs::path& file, size_t pos, std::optional<uint64_t> block) {
    const std::string pristine = read_bytes(file);
    std::string bytes = pristine;
    bytes[pos] = static_cast<char>(bytes[pos] ^ 0xff);
    write_bytes(file, bytes);
    const LoaderOutcome o = run_epoch(dir);
    write_bytes(file, pristine);
    ++tried;
    INFO(file.filename().string(), " byte ", pos);
    CHECK(o.wrong_rows == 0);
    REQUIRE_MESSAGE(o.error.has_value(), "no error; " << o.rows << " rows");
    INFO("loader said: ", o.error->what());
    CHECK(o.error->code() != ErrorCode::kTimeout);
    const bool ok = o.error->file() == file.string() && (!block || o.error->block() == block);
    CHECK(ok);
    if (ok) ++named;
  };
  for (const ShardEntry& entry : m.shards) {
    const fs::path path = dir / entry.name;
    auto shard = ShardFile::open(path, m.schema, m.records_per_block, entry);
    std::vector<std::pair<size_t, std::optional<uint64_t>>> positions;
    for (size_t pos : {0, 8, 12, 16, 20, 24, 32, 40, 48}) positions.push_back({pos, std::nullopt});
    for (uint64_t b = 0; b < shard->block_count(); ++b) {
      const auto& e = shard->index_entry(b);
      positions.push_back({e.offset, b});
      positions.push_back({e.offset + e.stored_size / 2, b});
      positions.push_back({e.offset + e.stored_size - 1, b});
    }
    for (size_t back : {1, 9, 17, 25, 33, 41, 60})
      positions.push_back({entry.bytes - back, std::nullopt});
    shard.reset();
    for (const auto& [pos, block] : positions) flip(path, pos, block);
  }
  const size_t msize = fs::file_size(dir / "manifest.json");
  for (size_t pos = 0; pos < msize; pos += 53) flip(dir / "manifest.json", pos, std::nullopt);
  std::printf(
      "loader on flipped datasets: %llu flips, %llu stopped with the file (and block) "
      "named, 0 wrong rows\n",
      static_cast<unsigned long long>(tried), static_cast<unsigned long long>(named));
}

}  // namespace
}  // namespace shardkit::reliability
