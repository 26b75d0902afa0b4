// Shared by the reliability tests: a small dataset whose every record is a pure function of its
// index (so a read can be checked without keeping what was written), a reader that compares
// every record against that function, and byte-level file surgery.
#pragma once

#include <doctest/doctest.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/checksum.h"
#include "core/dataset.h"
#include "core/dataset_writer.h"
#include "core/error.h"
#include "core/schema.h"
#include "reliability_records.h"
#include "test_util.h"

namespace shardkit::reliability {

namespace fs = std::filesystem;

struct SmallDatasetOptions {
  uint64_t records = 100;
  uint32_t records_per_block = 8;
  uint64_t shard_bytes = 1200;  // about three shards for 100 records
  format::BlockFilter filter = format::BlockFilter::kBytePlanes;
  bool overwrite = false;
};

inline Manifest write_small_dataset(const fs::path& dir, const SmallDatasetOptions& o = {}) {
  const Schema schema = small_schema();
  WriterOptions w;
  w.block_bytes = static_cast<uint32_t>(o.records_per_block * schema.record_size());
  w.shard_bytes = o.shard_bytes;
  w.filter = o.filter;
  w.overwrite = o.overwrite;
  DatasetWriter writer(dir, schema, w);
  std::vector<unsigned char> rec(schema.record_size());
  for (uint64_t i = 0; i < o.records; ++i) {
    expected_record(schema, i, o.records, rec.data());
    writer.append(rec.data());
  }
  writer.set_metadata("note", "\"reliability test dataset\"");
  return writer.finish();
}

// What reading a whole dataset through the public reader gave.
struct ReadOutcome {
  std::optional<Error> error;  // the first error thrown, if any
  uint64_t records_read = 0;   // records returned before the error (or all of them)
  uint64_t wrong_records = 0;  // returned, but different from what was written
  bool wrong_size = false;     // opened fine but claims a different record count
};

// Opens `dir`, reads every record in order and compares each with expected_record().
inline ReadOutcome read_and_compare(const fs::path& dir, uint64_t expected_records,
                                    uint8_t seed = 0) {
  ReadOutcome r;
  try {
    Dataset ds = Dataset::open(dir, DatasetOptions{1 << 20});
    if (ds.size() != expected_records) r.wrong_size = true;
    const Schema& schema = ds.schema();
    std::vector<unsigned char> got(schema.record_size()), want(schema.record_size());
    for (uint64_t i = 0; i < ds.size(); ++i) {
      ds.read(i, got.data());
      ++r.records_read;
      if (schema.record_size() != small_schema().record_size()) {
        ++r.wrong_records;
        continue;
      }
      expected_record(schema, i, expected_records, want.data(), seed);
      if (got != want) ++r.wrong_records;
    }
  } catch (const Error& e) {
    r.error = e;
  }
  return r;
}

inline std::string read_bytes(const fs::path& p) { return testing::read_file(p); }

// Replaces a file's content in place: ftruncate to the new length, then pwrite. Unlike
// truncating to zero and rewriting, this does not make ext4 flush the file on close
// (auto_da_alloc), which made byte sweeps wait on the disk.
inline void write_bytes(const fs::path& p, const std::string& b) {
  int fd = ::open(p.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  REQUIRE_MESSAGE(fd >= 0, "cannot open " << p);
  REQUIRE(::ftruncate(fd, static_cast<off_t>(b.size())) == 0);
  size_t done = 0;
  while (done < b.size()) {
    ssize_t n = ::pwrite(fd, b.data() + done, b.size() - done, static_cast<off_t>(done));
    REQUIRE(n > 0);
    done += static_cast<size_t>(n);
  }
  ::close(fd);
}

// Copies a dataset directory (plain files only).
inline void copy_dataset(const fs::path& from, const fs::path& to) {
  fs::create_directories(to);
  for (const auto& e : fs::directory_iterator(from))
    fs::copy_file(e.path(), to / e.path().filename(), fs::copy_options::overwrite_existing);
}

// Rewrites manifest.json from `m` (a valid checksum line included), e.g. after editing a shard's
// size so that the manifest agrees with a truncated file.
inline void write_manifest(const fs::path& dir, const Manifest& m) {
  write_bytes(dir / "manifest.json", m.serialize());
}

// A manifest body (everything before the checksum line) completed with its correct checksum
// line, so that a hostile manifest gets past the checksum to the checks behind it.
inline std::string with_checksum_line(const std::string& body) {
  return body + format::kManifestChecksumPrefix + checksum_hex(xxh3_64(body.data(), body.size())) +
         format::kManifestChecksumSuffix;
}

}  // namespace shardkit::reliability
