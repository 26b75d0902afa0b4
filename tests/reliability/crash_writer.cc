// reliability_crash_writer OUT RECORDS SEED [--overwrite]: writes the reliability dataset
// (records from reliability_records.h, XORed with SEED) through DatasetWriter with small blocks
// and shards and two encoding threads, so that it spends its time in every phase the crash-safety
// test kills it in: encoding, shard writes and fsyncs, the manifest, the publishing rename.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <vector>

#include "core/dataset_writer.h"
#include "reliability_records.h"

int main(int argc, char** argv) {
  using namespace shardkit;
  if (argc < 4) {
    std::fprintf(stderr, "usage: reliability_crash_writer OUT RECORDS SEED [--overwrite]\n");
    return 2;
  }
  try {
    const uint64_t records = std::strtoull(argv[2], nullptr, 10);
    const auto seed = static_cast<uint8_t>(std::strtoul(argv[3], nullptr, 10));
    const Schema schema = reliability::small_schema();
    WriterOptions o;
    o.block_bytes = static_cast<uint32_t>(256 * schema.record_size());
    o.shard_bytes = 128 * 1024;
    o.threads = 2;
    o.overwrite = argc > 4 && std::strcmp(argv[4], "--overwrite") == 0;
    DatasetWriter w(argv[1], schema, o);
    std::vector<unsigned char> rec(schema.record_size());
    for (uint64_t i = 0; i < records; ++i) {
      reliability::expected_record(schema, i, records, rec.data(), seed);
      w.append(rec.data());
    }
    w.finish();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "reliability_crash_writer: %s\n", e.what());
    return 1;
  }
  return 0;
}
