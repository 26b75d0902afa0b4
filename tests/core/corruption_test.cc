// A byte flipped in a block, the index, the header, the footer or the manifest is reported by
// the reader and by `shard-inspect verify`, naming the file (and the block); truncation is an
// error, never a crash.
#include <doctest/doctest.h>

#include <random>

#include "core/dataset.h"
#include "core/dataset_writer.h"
#include "core/error.h"
#include "core/shard_file.h"
#include "core/verify.h"
#include "format/shard_format.h"
#include "test_util.h"

using namespace shardkit;
using shardkit::testing::TempDir;

namespace {

const Schema kSchema({{"input_ids", DType::kU16, {64}}, {"length", DType::kU16, {}}});
constexpr size_t kRecords = 1000;

void write_dataset(const std::filesystem::path& dir) {
  std::mt19937_64 rng(3);
  std::vector<unsigned char> data(kRecords * kSchema.record_size());
  for (auto& b : data) b = static_cast<unsigned char>(rng() % 50);
  WriterOptions opt;
  opt.block_bytes = 8192;
  opt.shard_bytes = 1 << 30;
  DatasetWriter w(dir, kSchema, opt);
  w.append_many(data.data(), kRecords);
  w.finish();
}

void flip(const std::filesystem::path& file, size_t offset) {
  std::string bytes = testing::read_file(file);
  REQUIRE(offset < bytes.size());
  bytes[offset] = static_cast<char>(bytes[offset] ^ 0x20);
  testing::write_file(file, bytes);
}

// Reads every record; returns the error message of the first failure, or "" when all read.
std::string read_all(const std::filesystem::path& dir) {
  try {
    Dataset ds = Dataset::open(dir);
    std::vector<unsigned char> rec(ds.schema().record_size());
    for (uint64_t i = 0; i < ds.size(); ++i) ds.read(i, rec.data());
    return "";
  } catch (const Error& e) {
    return e.what();
  }
}

struct Layout {
  format::ShardHeader header;
  format::ShardFooter footer;
  std::vector<format::IndexEntry> index;
  size_t size;
};

Layout layout_of(const std::filesystem::path& shard) {
  std::string b = testing::read_file(shard);
  auto* p = reinterpret_cast<const unsigned char*>(b.data());
  Layout l;
  l.size = b.size();
  l.header = format::ShardHeader::decode(p);
  l.footer = format::ShardFooter::decode(p + b.size() - format::kFooterSize);
  for (uint64_t i = 0; i < l.header.block_count(); ++i)
    l.index.push_back(
        format::IndexEntry::decode(p + l.footer.index_offset + i * format::kIndexEntrySize));
  return l;
}

}  // namespace

TEST_CASE("flips in each region are detected by the reader and by verify") {
  TempDir tmp("corrupt");
  write_dataset(tmp / "clean");
  const auto shard_name = "shard-00000.shard";
  const Layout l = layout_of(tmp / "clean" / shard_name);
  REQUIRE(l.index.size() >= 3);

  struct Case {
    const char* region;
    size_t offset;
    bool names_block;
  };
  const std::vector<Case> cases = {
      {"header magic", 0, false},
      {"header record count", 24, false},
      {"schema text", format::kHeaderSize + 3, false},
      {"block 2 payload", static_cast<size_t>(l.index[2].offset + l.index[2].stored_size / 2),
       true},
      {"index entry 1 checksum",
       static_cast<size_t>(l.footer.index_offset + format::kIndexEntrySize + 16), false},
      {"footer index offset", l.size - format::kFooterSize + 1, false},
      {"footer magic", l.size - 3, false},
  };
  for (const Case& c : cases) {
    CAPTURE(c.region);
    const auto dir = tmp / ("flip-" + std::to_string(c.offset));
    std::filesystem::copy(tmp / "clean", dir);
    flip(dir / shard_name, c.offset);

    const std::string err = read_all(dir);
    CHECK(err.find(shard_name) != std::string::npos);
    if (c.names_block) CHECK(err.find("block 2") != std::string::npos);

    VerifyReport r = verify_dataset(dir);
    REQUIRE_FALSE(r.ok());
    CHECK(r.faults[0].file.find(shard_name) != std::string::npos);
    if (c.names_block) CHECK(r.faults[0].block == 2u);

    std::string out;
    CHECK(testing::run_command(testing::tool_path("shard-inspect") + " verify " + dir.string(),
                               &out) == 1);
    CHECK(out.find(shard_name) != std::string::npos);
  }
  // The untouched copy still verifies, through the library and the tool.
  CHECK(verify_dataset(tmp / "clean").ok());
  CHECK(testing::run_command(testing::tool_path("shard-inspect") + " verify " +
                             (tmp / "clean").string()) == 0);
  CHECK(read_all(tmp / "clean").empty());
}

TEST_CASE("a flipped manifest byte is detected") {
  TempDir tmp("manifest");
  write_dataset(tmp / "ds");
  const auto manifest = tmp / "ds" / "manifest.json";
  const std::string original = testing::read_file(manifest);
  for (size_t offset :
       {size_t{5}, original.size() / 2, original.size() - 10, original.size() - 1}) {
    CAPTURE(offset);
    testing::write_file(manifest, original);
    flip(manifest, offset);
    const std::string err = read_all(tmp / "ds");
    CHECK(err.find("manifest.json") != std::string::npos);
    CHECK_FALSE(verify_dataset(tmp / "ds").ok());
  }
}

TEST_CASE("truncated and empty shards are errors, not crashes") {
  TempDir tmp("trunc");
  write_dataset(tmp / "clean");
  const std::string bytes = testing::read_file(tmp / "clean" / "shard-00000.shard");
  for (size_t keep :
       {size_t{0}, size_t{10}, format::kHeaderSize, bytes.size() / 2, bytes.size() - 1}) {
    CAPTURE(keep);
    const auto dir = tmp / ("t" + std::to_string(keep));
    std::filesystem::copy(tmp / "clean", dir);
    testing::write_file(dir / "shard-00000.shard", bytes.substr(0, keep));
    const std::string err = read_all(dir);
    CHECK(err.find("shard-00000.shard") != std::string::npos);
    CHECK_FALSE(verify_dataset(dir).ok());
  }
  // A missing shard too.
  const auto dir = tmp / "missing";
  std::filesystem::copy(tmp / "clean", dir);
  std::filesystem::remove(dir / "shard-00000.shard");
  CHECK(read_all(dir).find("cannot open") != std::string::npos);
}

TEST_CASE("a directory without a manifest is not a dataset") {
  TempDir tmp("nomanifest");
  write_dataset(tmp / "ds");
  std::filesystem::remove(tmp / "ds" / "manifest.json");
  CHECK_THROWS_WITH_AS(Dataset::open(tmp / "ds"), doctest::Contains("no manifest.json"), Error);
  // A file named as the dataset is named as a file, not as a directory missing its manifest.
  testing::write_file(tmp / "file.txt", "text\n");
  CHECK_THROWS_WITH_AS(Dataset::open(tmp / "file.txt"),
                       doctest::Contains("a dataset is a directory, this is a file"), Error);
  CHECK_THROWS_WITH_AS(Dataset::open(tmp / "nowhere"), doctest::Contains("the path does not exist"),
                       Error);
}
