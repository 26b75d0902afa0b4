// fuzz_make_seeds OUT_DIR: writes the seed corpora of the core fuzz targets (shard images,
// manifests, schema texts) from a few small datasets made with DatasetWriter, into
// OUT_DIR/<target>/. Each shard and manifest seed comes in both modes of its target (first byte
// 0: as is, 1: resealed / checksum line appended).
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "core/dataset_writer.h"
#include "format/shard_format.h"

namespace fs = std::filesystem;
using namespace shardkit;

namespace {

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

void emit(const fs::path& dir, const std::string& name, const std::string& bytes) {
  fs::create_directories(dir);
  std::ofstream(dir / name, std::ios::binary) << bytes;
}

struct Spec {
  std::string name;
  Schema schema;
  uint64_t records;
  uint32_t records_per_block;
  format::BlockFilter filter;
};

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: fuzz_make_seeds OUT_DIR\n");
    return 2;
  }
  const fs::path out = argv[1];
  const fs::path scratch = fs::temp_directory_path() / "shardkit-fuzz-seeds";
  fs::remove_all(scratch);
  fs::create_directories(scratch);
  const std::vector<Spec> specs = {
      {"planes", Schema({{"input_ids", DType::kU16, {12}, 0}, {"labels", DType::kI32, {}, 0}}), 20,
       4, format::BlockFilter::kBytePlanes},
      {"plain", Schema({{"tokens", DType::kU32, {8}, 0}, {"label", DType::kI64, {}, 0}}), 10, 3,
       format::BlockFilter::kNone},
      {"mixed", Schema({{"x", DType::kU8, {2, 3}, 0}, {"y", DType::kF32, {}, 0}}), 5, 2,
       format::BlockFilter::kBytePlanes},
      {"empty", Schema({{"a", DType::kU8, {}, 0}}), 0, 1, format::BlockFilter::kNone},
  };
  for (const Spec& s : specs) {
    WriterOptions o;
    o.block_bytes = static_cast<uint32_t>(s.records_per_block * s.schema.record_size());
    o.filter = s.filter;
    const fs::path dir = scratch / s.name;
    DatasetWriter w(dir, s.schema, o);
    std::vector<unsigned char> rec(s.schema.record_size());
    for (uint64_t i = 0; i < s.records; ++i) {
      // Half the records repetitive (zstd blocks), half pseudo-random (raw blocks).
      for (size_t b = 0; b < rec.size(); ++b)
        rec[b] = static_cast<unsigned char>(i < s.records / 2 ? (i + b) % 3
                                                              : (i * 131 + b * 71) ^ (i >> 1) * 29);
      w.append(rec.data());
    }
    w.set_metadata("tokenizer", "{\"type\": \"wordpiece\", \"vocab_size\": 30522}");
    w.set_metadata("labels", "[\"neg\", \"pos\"]");
    const Manifest m = w.finish();
    const std::string manifest = slurp(dir / format::kManifestName);
    emit(out / "fuzz_manifest", s.name + "-as-is", std::string(1, '\0') + manifest);
    emit(out / "fuzz_manifest", s.name + "-body",
         std::string(1, '\1') + manifest.substr(0, manifest.size() - format::kManifestTailSize));
    emit(out / "fuzz_schema", s.name, s.schema.canonical());
    for (const ShardEntry& e : m.shards) {
      const std::string shard = slurp(dir / e.name);
      emit(out / "fuzz_shard_file", s.name + "-" + e.name + "-as-is", std::string(1, '\0') + shard);
      emit(out / "fuzz_shard_file", s.name + "-" + e.name + "-resealed",
           std::string(1, '\1') + shard);
    }
  }
  fs::remove_all(scratch);
  std::printf("seeds written under %s\n", out.c_str());
  return 0;
}
