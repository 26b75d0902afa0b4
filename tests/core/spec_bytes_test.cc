// Checks files written by the library byte by byte against format/SPEC.md. The expected bytes
// are composed here from the spec's tables with their own little-endian writer and xxHash's own
// XXH3 — not from shardkit's encoders.
#include <doctest/doctest.h>
#include <simdjson.h>
#include <xxhash.h>
#include <zstd.h>

#include <cstring>

#include "core/dataset_writer.h"
#include "test_util.h"

using namespace shardkit;
using shardkit::testing::TempDir;

namespace {

struct Bytes {
  std::string s;
  void u(uint64_t v, int width) {
    for (int i = 0; i < width; ++i) s += static_cast<char>((v >> (8 * i)) & 0xff);
  }
  void text(const std::string& t) { s += t; }
};

uint64_t xxh3(const std::string& s) { return XXH3_64bits(s.data(), s.size()); }

std::string hex16(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

}  // namespace

TEST_CASE("a tiny raw-block shard matches SPEC.md byte for byte") {
  TempDir tmp("spec");
  // Schema a:u16[2];b:i32[] -> record_size 8; block_bytes 16 -> records_per_block 2.
  const Schema schema({{"a", DType::kU16, {2}}, {"b", DType::kI32, {}}});
  struct Rec {
    uint16_t a[2];
    int32_t b;
  };
  const Rec recs[3] = {{{1, 2}, -1}, {{300, 4}, 5}, {{7, 65535}, 1 << 20}};
  WriterOptions opt;
  opt.block_bytes = 16;
  opt.filter = format::BlockFilter::kNone;
  {
    DatasetWriter w(tmp / "ds", schema, opt);
    for (const Rec& r : recs) {
      unsigned char buf[8];
      std::memcpy(buf, r.a, 4);
      std::memcpy(buf + 4, &r.b, 4);
      w.append(buf);
    }
    w.finish();
  }
  const std::string schema_text = "a:u16[2];b:i32[]";

  // Records, little-endian, no padding (SPEC: "Schema text").
  Bytes rec;
  for (const Rec& r : recs) {
    rec.u(r.a[0], 2);
    rec.u(r.a[1], 2);
    rec.u(static_cast<uint32_t>(r.b), 4);
  }
  // Blocks of 2 records then 1; both too small for zstd to shrink, so stored raw.
  const std::string block0 = rec.s.substr(0, 16), block1 = rec.s.substr(16, 8);

  Bytes header;
  header.text("SHARDKIT");
  header.u(1, 2);                   // version
  header.u(0, 2);                   // reserved
  header.u(schema_text.size(), 4);  // schema_size
  header.u(8, 4);                   // record_size
  header.u(2, 4);                   // records_per_block
  header.u(3, 8);                   // record_count
  header.u(0, 1);                   // filter: none
  header.u(0, 7);                   // reserved
  REQUIRE(header.s.size() == 40);
  const uint64_t header_checksum = xxh3(header.s + schema_text);
  header.u(header_checksum, 8);

  const uint64_t first_block = 48 + schema_text.size();
  Bytes index;
  index.u(first_block, 8);
  index.u(16, 4);
  index.u(0, 1);  // raw
  index.u(0, 3);
  index.u(xxh3(block0), 8);
  index.u(first_block + 16, 8);
  index.u(8, 4);
  index.u(0, 1);
  index.u(0, 3);
  index.u(xxh3(block1), 8);

  Bytes footer;
  footer.u(first_block + 24, 8);  // index_offset
  footer.u(xxh3(index.s), 8);
  footer.u(header_checksum, 8);
  const uint64_t footer_checksum = xxh3(footer.s);
  footer.u(footer_checksum, 8);
  footer.text("SHARDEND");

  const std::string expected = header.s + schema_text + block0 + block1 + index.s + footer.s;
  const std::string actual = testing::read_file(tmp / "ds" / "shard-00000.shard");
  REQUIRE(actual.size() == expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    CAPTURE(i);
    REQUIRE(static_cast<int>(static_cast<unsigned char>(actual[i])) ==
            static_cast<int>(static_cast<unsigned char>(expected[i])));
  }

  // The manifest: key order, shard entry, and the checksum line over everything before it.
  const std::string manifest = testing::read_file(tmp / "ds" / "manifest.json");
  const std::string tail_prefix = "  \"manifest_xxh3\": \"";
  const size_t tail = manifest.size() - 40;  // SPEC: the last line is 40 bytes
  REQUIRE(manifest.compare(tail, tail_prefix.size(), tail_prefix) == 0);
  CHECK(manifest.substr(manifest.size() - 4) == "\"\n}\n");
  CHECK(manifest.substr(tail + tail_prefix.size(), 16) == hex16(xxh3(manifest.substr(0, tail))));
  // Top-level keys in the SPEC's order, with the values it states.
  simdjson::dom::parser parser;
  simdjson::dom::object root = parser.parse(manifest).get_object().value();
  std::vector<std::string> keys;
  for (auto [key, value] : root) keys.emplace_back(key);
  CHECK(keys == std::vector<std::string>{"format", "format_version", "producer", "schema",
                                         "record_size", "records_per_block", "records",
                                         "bytes_on_disk", "shards", "dataset", "metadata",
                                         "manifest_xxh3"});
  CHECK(std::string_view(root["format"].get_string().value()) == "shardkit");
  CHECK(root["format_version"].get_uint64().value() == 2);
  CHECK(root["record_size"].get_uint64().value() == 8);
  CHECK(root["records_per_block"].get_uint64().value() == 2);
  CHECK(root["records"].get_uint64().value() == 3);
  simdjson::dom::element shard = root["shards"].at(0).value();
  CHECK(std::string_view(shard["name"].get_string().value()) == "shard-00000.shard");
  CHECK(shard["records"].get_uint64().value() == 3);
  CHECK(shard["bytes"].get_uint64().value() == expected.size());
  CHECK(std::string_view(shard["checksum"].get_string().value()) == hex16(footer_checksum));
  simdjson::dom::element field = root["schema"].at(0).value();
  CHECK(std::string_view(field["name"].get_string().value()) == "a");
  CHECK(std::string_view(field["dtype"].get_string().value()) == "u16");
  CHECK(field["shape"].at(0).get_uint64().value() == 2);
  // Two-space indentation, as SPEC.md shows it.
  CHECK(manifest.rfind("{\n  \"format\": \"shardkit\",\n  \"format_version\": 2,\n", 0) == 0);
}

TEST_CASE("a zstd block with byte planes decodes per SPEC.md with plain zstd") {
  TempDir tmp("spec2");
  const Schema schema({{"ids", DType::kU16, {64}}, {"len", DType::kU32, {}}});
  const size_t n = 40;
  std::vector<unsigned char> records(n * schema.record_size());
  for (size_t i = 0; i < records.size(); ++i) records[i] = static_cast<unsigned char>((i * 7) % 13);
  WriterOptions opt;
  opt.block_bytes = 1 << 20;
  opt.filter = format::BlockFilter::kBytePlanes;
  {
    DatasetWriter w(tmp / "ds", schema, opt);
    w.append_many(records.data(), n);
    w.finish();
  }
  const std::string file = testing::read_file(tmp / "ds" / "shard-00000.shard");
  auto u = [&](size_t off, int width) {
    uint64_t v = 0;
    for (int i = 0; i < width; ++i)
      v |= uint64_t(static_cast<unsigned char>(file[off + i])) << (8 * i);
    return v;
  };
  CHECK(u(32, 1) == 1);  // filter: byte planes
  const uint64_t index_offset = u(file.size() - 40, 8);
  const uint64_t offset = u(index_offset, 8), size = u(index_offset + 8, 4);
  REQUIRE(u(index_offset + 12, 1) == 1);  // zstd
  std::vector<unsigned char> payload(records.size());
  REQUIRE(ZSTD_decompress(payload.data(), payload.size(), file.data() + offset, size) ==
          payload.size());

  // Byte planes, per SPEC.md: field, then byte position, then record, then element.
  std::vector<unsigned char> expected;
  for (const Field& f : schema.fields()) {
    const size_t es = dtype_size(f.dtype);
    for (size_t j = 0; j < es; ++j)
      for (size_t r = 0; r < n; ++r)
        for (size_t e = 0; e < f.element_count(); ++e)
          expected.push_back(records[r * schema.record_size() + f.offset + e * es + j]);
  }
  CHECK(payload == expected);
}
