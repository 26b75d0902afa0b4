// Flips every byte of every shard and of the manifest of a small dataset, one at a time, and
// truncates every file at every length. Each change must be reported both by verify_dataset and
// by the reader (Dataset::open plus reading every record), naming the file and, for a byte inside
// a stored block, that block. A change neither reports counts as harmless only if every record
// still reads back exactly as written; a wrong record returned without an error fails the test.
#include <doctest/doctest.h>

#include <cstdio>
#include <map>

#include "core/shard_file.h"
#include "core/verify.h"
#include "reliability_util.h"

namespace shardkit::reliability {
namespace {

constexpr uint64_t kRecords = 100;

// Which stored block, if any, each byte of a shard belongs to.
std::vector<std::optional<uint64_t>> block_map(const fs::path& path, const Manifest& m,
                                               const ShardEntry& entry) {
  auto shard = ShardFile::open(path, m.schema, m.records_per_block, entry);
  std::vector<std::optional<uint64_t>> map(entry.bytes);
  for (uint64_t b = 0; b < shard->block_count(); ++b) {
    const auto& e = shard->index_entry(b);
    for (uint64_t i = e.offset; i < e.offset + e.stored_size; ++i) map[i] = b;
  }
  return map;
}

struct Tally {
  uint64_t tried = 0;
  uint64_t detected_by_both = 0;
  uint64_t harmless = 0;
  std::vector<std::string> failures;  // undetected-but-changed, wrong file/block, silent garbage

  void fail(const std::string& what) {
    if (failures.size() < 20)
      failures.push_back(what);
    else if (failures.size() == 20)
      failures.push_back("... more");
  }
};

// Checks one damaged state of the dataset in `dir`. `file` is the damaged file; `block`, when
// set, the block a correct report must name.
void check_damage(const fs::path& dir, const fs::path& file, std::optional<uint64_t> block,
                  const std::string& what, Tally& t) {
  ++t.tried;
  const VerifyReport report = verify_dataset(dir);
  const ReadOutcome read = read_and_compare(dir, kRecords);
  if (!read.error && (read.wrong_records || read.wrong_size)) {
    t.fail(what + ": reader returned " + std::to_string(read.wrong_records) +
           " wrong record(s) without an error");
    return;
  }
  if (report.ok() && !read.error) {
    ++t.harmless;  // every record compared equal to what was written
    return;
  }
  bool verify_named = false;
  for (const VerifyFault& f : report.faults)
    if (f.file == file.string() && (!block || f.block == block)) verify_named = true;
  bool reader_named =
      read.error && read.error->file() == file.string() && (!block || read.error->block() == block);
  if (!verify_named)
    t.fail(what + ": verify did not name " + file.filename().string() +
           (block ? " block " + std::to_string(*block) : "") +
           (report.faults.empty() ? " (no fault)" : " (said: " + report.faults[0].message + ")"));
  if (!reader_named)
    t.fail(what + ": reader did not name " + file.filename().string() +
           (block ? " block " + std::to_string(*block) : "") +
           (read.error ? std::string(" (said: ") + read.error->what() + ")" : " (no error)"));
  if (verify_named && reader_named) ++t.detected_by_both;
}

void report_tally(const char* name, const Tally& t) {
  std::printf("%-44s tried %6llu  detected %6llu  harmless %4llu  failures %zu\n", name,
              static_cast<unsigned long long>(t.tried),
              static_cast<unsigned long long>(t.detected_by_both),
              static_cast<unsigned long long>(t.harmless), t.failures.size());
  for (const auto& f : t.failures) MESSAGE(f);
  CHECK(t.failures.empty());
}

struct Fixture {
  testing::TempDir tmp{"sweep"};
  fs::path dir = tmp / "ds";
  Manifest manifest;
  Fixture() {
    manifest = write_small_dataset(dir, {.records = kRecords});
    REQUIRE(manifest.shards.size() >= 2);
    REQUIRE(verify_dataset(dir).ok());
    REQUIRE(!read_and_compare(dir, kRecords).error);
  }
};

TEST_CASE("every byte flip of every shard is detected, naming shard and block") {
  Fixture fx;
  Tally t;
  uint64_t raw_blocks = 0, zstd_blocks = 0;
  for (const ShardEntry& entry : fx.manifest.shards) {
    const fs::path path = fx.dir / entry.name;
    const auto blocks = block_map(path, fx.manifest, entry);
    {
      auto shard = ShardFile::open(path, fx.manifest.schema, fx.manifest.records_per_block, entry);
      for (uint64_t b = 0; b < shard->block_count(); ++b)
        (shard->index_entry(b).encoding == format::BlockEncoding::kRaw ? raw_blocks
                                                                       : zstd_blocks)++;
    }
    const std::string pristine = read_bytes(path);
    for (size_t pos = 0; pos < pristine.size(); ++pos) {
      for (unsigned char mask : {0xffu, 0x01u}) {
        std::string bytes = pristine;
        bytes[pos] = static_cast<char>(bytes[pos] ^ mask);
        write_bytes(path, bytes);
        check_damage(fx.dir, path, blocks[pos],
                     entry.name + " byte " + std::to_string(pos) + " ^" + std::to_string(mask), t);
      }
    }
    write_bytes(path, pristine);
  }
  // Both encodings must have been under test for the sweep to mean what it says.
  CHECK(raw_blocks > 0);
  CHECK(zstd_blocks > 0);
  std::printf("shards: %zu, blocks: %llu zstd + %llu raw\n", fx.manifest.shards.size(),
              static_cast<unsigned long long>(zstd_blocks),
              static_cast<unsigned long long>(raw_blocks));
  report_tally("shard byte flips (xor 0xff, xor 0x01)", t);
  CHECK(t.harmless == 0);  // every shard byte is covered by a checksum or checked exactly
}

TEST_CASE("every byte flip of the manifest is detected, naming the manifest") {
  Fixture fx;
  Tally t;
  const fs::path path = fx.dir / "manifest.json";
  const std::string pristine = read_bytes(path);
  for (size_t pos = 0; pos < pristine.size(); ++pos) {
    for (unsigned char mask : {0xffu, 0x01u, 0x20u}) {
      std::string bytes = pristine;
      bytes[pos] = static_cast<char>(bytes[pos] ^ mask);
      write_bytes(path, bytes);
      check_damage(fx.dir, path, std::nullopt,
                   "manifest byte " + std::to_string(pos) + " ^" + std::to_string(mask), t);
    }
  }
  write_bytes(path, pristine);
  report_tally("manifest byte flips (xor 0xff, 0x01, 0x20)", t);
  CHECK(t.harmless == 0);  // the checksum line covers every byte before it and is exact itself
}

TEST_CASE("a shard truncated at every length, or extended, is detected") {
  Fixture fx;
  Tally plain, consistent;
  uint64_t boundaries = 0;
  for (const ShardEntry& entry : fx.manifest.shards) {
    const fs::path path = fx.dir / entry.name;
    const std::string pristine = read_bytes(path);
    const std::string manifest_text = read_bytes(fx.dir / "manifest.json");
    const auto blocks = block_map(path, fx.manifest, entry);
    for (size_t len = 0; len < pristine.size(); ++len) {
      if (len > 0 && blocks[len] != blocks[len - 1]) ++boundaries;
      write_bytes(path, pristine.substr(0, len));
      check_damage(fx.dir, path, std::nullopt, entry.name + " cut to " + std::to_string(len),
                   plain);
      // The same cut with a manifest that agrees about the size: the shard's own structure
      // must give the truncation away.
      Manifest m = fx.manifest;
      for (ShardEntry& e : m.shards)
        if (e.name == entry.name) e.bytes = len;
      write_manifest(fx.dir, m);
      check_damage(fx.dir, path, std::nullopt,
                   entry.name + " cut to " + std::to_string(len) + " (manifest agrees)",
                   consistent);
      write_bytes(fx.dir / "manifest.json", manifest_text);
    }
    write_bytes(path, pristine + std::string(1, '\0'));
    check_damage(fx.dir, path, std::nullopt, entry.name + " extended by one byte", plain);
    write_bytes(path, pristine);
  }
  std::printf("block boundaries among the cuts: %llu\n",
              static_cast<unsigned long long>(boundaries));
  report_tally("shard truncations", plain);
  report_tally("shard truncations, manifest agreeing on size", consistent);
  CHECK(plain.harmless == 0);
  CHECK(consistent.harmless == 0);
}

TEST_CASE("a manifest truncated at every length, and zero-length files, are detected") {
  Fixture fx;
  Tally t;
  const fs::path path = fx.dir / "manifest.json";
  const std::string pristine = read_bytes(path);
  for (size_t len = 0; len < pristine.size(); ++len) {
    write_bytes(path, pristine.substr(0, len));
    check_damage(fx.dir, path, std::nullopt, "manifest cut to " + std::to_string(len), t);
  }
  write_bytes(path, pristine);
  report_tally("manifest truncations (zero length included)", t);
  CHECK(t.harmless == 0);

  Tally z;
  for (const ShardEntry& entry : fx.manifest.shards) {
    const fs::path shard = fx.dir / entry.name;
    const std::string bytes = read_bytes(shard);
    write_bytes(shard, "");
    check_damage(fx.dir, shard, std::nullopt, entry.name + " emptied", z);
    fs::remove(shard);
    check_damage(fx.dir, shard, std::nullopt, entry.name + " missing", z);
    write_bytes(shard, bytes);
  }
  report_tally("zero-length and missing shards", z);
  CHECK(z.harmless == 0);
}

TEST_CASE("shard-inspect verify reports a sample of the flips, naming file and block") {
  Fixture fx;
  const std::string tool = testing::tool_path("shard-inspect");
  REQUIRE(fs::exists(tool));
  uint64_t runs = 0;
  auto expect_fault = [&](const fs::path& file, size_t pos, std::optional<uint64_t> block) {
    const std::string pristine = read_bytes(file);
    std::string bytes = pristine;
    bytes[pos] = static_cast<char>(bytes[pos] ^ 0xff);
    write_bytes(file, bytes);
    std::string out;
    const int rc = testing::run_command(tool + " verify '" + fx.dir.string() + "'", &out);
    write_bytes(file, pristine);
    ++runs;
    INFO(file.filename().string(), " byte ", pos, ": ", out);
    CHECK(rc == 1);
    CHECK(out.find("FAULT " + file.string()) != std::string::npos);
    if (block)
      CHECK(out.find(file.string() + ": block " + std::to_string(*block) + ":") !=
            std::string::npos);
  };
  for (const ShardEntry& entry : fx.manifest.shards) {
    const fs::path path = fx.dir / entry.name;
    const auto blocks = block_map(path, fx.manifest, entry);
    // Header fields, the schema text, each block's first and last byte, the index, the footer.
    std::vector<size_t> positions = {0, 8, 10, 12, 16, 20, 24, 32, 33, 40, 47, 48};
    for (size_t pos = 1; pos < blocks.size(); ++pos)
      if (blocks[pos] && blocks[pos] != blocks[pos - 1]) positions.push_back(pos);
    for (size_t pos = 0; pos + 1 < blocks.size(); ++pos)
      if (blocks[pos] && blocks[pos] != blocks[pos + 1]) positions.push_back(pos);
    for (size_t back : {1, 8, 9, 17, 25, 33, 40, 41, 53, 64})
      positions.push_back(entry.bytes - back);
    for (size_t pos : positions) expect_fault(path, pos, blocks[pos]);
  }
  const fs::path manifest = fx.dir / "manifest.json";
  const size_t msize = fs::file_size(manifest);
  for (size_t pos = 0; pos < msize; pos += 37) expect_fault(manifest, pos, std::nullopt);
  expect_fault(manifest, msize - 1, std::nullopt);
  std::printf("shard-inspect verify runs on flipped datasets: %llu\n",
              static_cast<unsigned long long>(runs));
}

}  // namespace
}  // namespace shardkit::reliability
