// Small datasets whose every value is a known function of the record index, so tests can check
// what a batch holds without trusting the reader.
#pragma once

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "core/dataset_writer.h"

namespace shardkit::testing {

inline constexpr uint32_t kSeqLen = 48;

// The expected contents of record i.
inline uint16_t fixture_length(uint64_t i) {
  return static_cast<uint16_t>(3 + (i * 7) % (kSeqLen - 2));
}
inline uint16_t fixture_length_a(uint64_t i) {
  return static_cast<uint16_t>(1 + i % fixture_length(i));
}
// [CLS]=1 first, [SEP]=2 last, ids 5.. between, 0 = padding.
inline uint16_t fixture_token(uint64_t i, uint32_t j) {
  const uint16_t len = fixture_length(i);
  if (j >= len) return 0;
  if (j == 0) return 1;
  if (j + 1 == len) return 2;
  return static_cast<uint16_t>(5 + (i * 131 + j * 17) % 900);
}

struct FixtureOptions {
  uint64_t records = 1000;
  uint32_t block_bytes = 4096;
  uint64_t shard_bytes = 1 << 20;
  bool with_length_a = false;
  int64_t label_base = 0;  // labels = label_base + record index (tells mixture sources apart)
  std::string task;        // DatasetInfo task type by name, when set
};

// Schema: input_ids u16[48], length u16, [length_a u16,] labels i64 (= label_base + the record
// index).
inline void write_fixture(const std::filesystem::path& dir, const FixtureOptions& o = {}) {
  std::vector<Field> fields = {{"input_ids", DType::kU16, {kSeqLen}}, {"length", DType::kU16, {}}};
  if (o.with_length_a) fields.push_back({"length_a", DType::kU16, {}});
  fields.push_back({"labels", DType::kI64, {}});
  Schema schema(fields);
  WriterOptions wo;
  wo.block_bytes = o.block_bytes;
  wo.shard_bytes = o.shard_bytes;
  wo.zstd_level = 1;
  DatasetWriter w(dir, schema, wo);
  if (o.with_length_a || !o.task.empty()) {
    DatasetInfo info = DatasetInfo::infer(schema);
    if (o.with_length_a) info.fields[2].role = FieldRole::kFirstSegmentLength;
    if (!o.task.empty()) info.task.type = parse_task(o.task);
    w.set_info(info);
  }
  std::vector<unsigned char> rec(schema.record_size());
  for (uint64_t i = 0; i < o.records; ++i) {
    uint16_t ids[kSeqLen];
    for (uint32_t j = 0; j < kSeqLen; ++j) ids[j] = fixture_token(i, j);
    std::memcpy(rec.data() + schema.at("input_ids").offset, ids, sizeof ids);
    const uint16_t len = fixture_length(i);
    std::memcpy(rec.data() + schema.at("length").offset, &len, 2);
    if (o.with_length_a) {
      const uint16_t la = fixture_length_a(i);
      std::memcpy(rec.data() + schema.at("length_a").offset, &la, 2);
    }
    const int64_t label = o.label_base + static_cast<int64_t>(i);
    std::memcpy(rec.data() + schema.at("labels").offset, &label, 8);
    w.append(rec.data());
  }
  w.finish();
}

}  // namespace shardkit::testing
