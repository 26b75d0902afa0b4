// The corruption sweep on a real `shardify` dataset (lm task, packed windows, small blocks):
// every byte of every shard and of the manifest flipped one at a time, and every shard cut at
// every block boundary (with the manifest agreeing on the new size). Each change must be
// reported by verify_dataset and by the reader, naming the file and, inside a block, the block;
// the reader must never return a record that differs from the undamaged dataset's.
#include <doctest/doctest.h>

#include <cstdio>

#include "core/shard_file.h"
#include "core/verify.h"
#include "shardify_fixture.h"

namespace shardkit::reliability {
namespace {

struct Tally {
  uint64_t tried = 0, detected = 0, harmless = 0;
  std::vector<std::string> failures;
  void fail(const std::string& what) {
    if (failures.size() < 20) failures.push_back(what);
  }
};

class Sweep {
 public:
  explicit Sweep(const fs::path& dir) : dir_(dir) {
    const Dataset ds = Dataset::open(dir);
    records_.resize(ds.size());
    for (uint64_t i = 0; i < ds.size(); ++i) {
      records_[i].resize(ds.schema().record_size());
      ds.read(i, records_[i].data());
    }
  }

  void check(const fs::path& file, std::optional<uint64_t> block, const std::string& what,
             Tally& t) const {
    ++t.tried;
    const VerifyReport report = verify_dataset(dir_);
    std::optional<Error> error;
    uint64_t wrong = 0;
    try {
      const Dataset ds = Dataset::open(dir_, DatasetOptions{1 << 20});
      if (ds.size() != records_.size()) ++wrong;
      std::vector<unsigned char> got(ds.schema().record_size());
      for (uint64_t i = 0; i < ds.size(); ++i) {
        ds.read(i, got.data());
        if (i >= records_.size() || got != records_[i]) ++wrong;
      }
    } catch (const Error& e) {
      error = e;
    }
    if (!error && wrong) return t.fail(what + ": wrong records without an error");
    if (report.ok() && !error) {
      ++t.harmless;
      return;
    }
    bool verify_named = false;
    for (const VerifyFault& f : report.faults)
      if (f.file == file.string() && (!block || f.block == block)) verify_named = true;
    const bool reader_named =
        error && error->file() == file.string() && (!block || error->block() == block);
    if (!verify_named) t.fail(what + ": verify did not name the file/block");
    if (!reader_named)
      t.fail(what + ": reader did not name the file/block" +
             (error ? std::string(" (said: ") + error->what() + ")" : std::string()));
    if (verify_named && reader_named) ++t.detected;
  }

 private:
  fs::path dir_;
  std::vector<std::vector<unsigned char>> records_;
};

void report(const char* name, const Tally& t) {
  std::printf("%-52s tried %6llu  detected %6llu  harmless %4llu\n", name,
              static_cast<unsigned long long>(t.tried), static_cast<unsigned long long>(t.detected),
              static_cast<unsigned long long>(t.harmless));
  for (const auto& f : t.failures) MESSAGE(f);
  CHECK(t.failures.empty());
  CHECK(t.harmless == 0);
}

TEST_CASE("every byte flip and block-boundary cut of a shardify dataset is detected") {
  testing::TempDir tmp("shardify-sweep");
  const fs::path vocab = write_vocab(tmp.path());
  testing::write_file(tmp / "in.txt", corpus_lines(300, 9));
  const fs::path dir = tmp / "ds";
  REQUIRE(
      run_shardify(
          "--input " + shell_quote((tmp / "in.txt").string()) +
          " --task lm --doc-sep line --max-len 32 --block-size 1024 --shard-size 2048 --threads 1"
          " --tokenizer " +
          shell_quote(vocab.string()) + " --out " + shell_quote(dir.string())) == 0);
  const Manifest m = Manifest::load(dir);
  REQUIRE(m.shards.size() >= 2);
  const Sweep sweep(dir);

  Tally flips, cuts;
  uint64_t blocks = 0;
  for (const ShardEntry& entry : m.shards) {
    const fs::path path = dir / entry.name;
    std::vector<std::optional<uint64_t>> block_of(entry.bytes);
    std::vector<uint64_t> boundaries;
    {
      auto shard = ShardFile::open(path, m.schema, m.records_per_block, entry);
      for (uint64_t b = 0; b < shard->block_count(); ++b, ++blocks) {
        const auto& e = shard->index_entry(b);
        boundaries.push_back(e.offset);
        for (uint64_t i = e.offset; i < e.offset + e.stored_size; ++i) block_of[i] = b;
      }
      boundaries.push_back(shard->index_entry(shard->block_count() - 1).offset +
                           shard->index_entry(shard->block_count() - 1).stored_size);
    }
    const std::string pristine = read_bytes(path);
    for (size_t pos = 0; pos < pristine.size(); ++pos) {
      std::string bytes = pristine;
      bytes[pos] = static_cast<char>(bytes[pos] ^ 0xff);
      write_bytes(path, bytes);
      sweep.check(path, block_of[pos], entry.name + " byte " + std::to_string(pos), flips);
    }
    const std::string manifest_text = read_bytes(dir / "manifest.json");
    for (uint64_t cut : boundaries) {
      write_bytes(path, pristine.substr(0, cut));
      Manifest agreeing = m;
      for (ShardEntry& e : agreeing.shards)
        if (e.name == entry.name) e.bytes = cut;
      write_manifest(dir, agreeing);
      sweep.check(path, std::nullopt, entry.name + " cut at " + std::to_string(cut), cuts);
      write_bytes(dir / "manifest.json", manifest_text);
    }
    write_bytes(path, pristine);
  }
  const fs::path mpath = dir / "manifest.json";
  const std::string manifest_text = read_bytes(mpath);
  for (size_t pos = 0; pos < manifest_text.size(); ++pos) {
    std::string bytes = manifest_text;
    bytes[pos] = static_cast<char>(bytes[pos] ^ 0xff);
    write_bytes(mpath, bytes);
    sweep.check(mpath, std::nullopt, "manifest byte " + std::to_string(pos), flips);
  }
  write_bytes(mpath, manifest_text);
  std::printf("shardify dataset: %zu shards, %llu blocks, %zu manifest bytes\n", m.shards.size(),
              static_cast<unsigned long long>(blocks), manifest_text.size());
  report("shardify dataset: byte flips (shards + manifest)", flips);
  report("shardify dataset: cuts at block boundaries", cuts);
}

}  // namespace
}  // namespace shardkit::reliability
