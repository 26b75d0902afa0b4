// ShardFile::open (header, footer and index validation) and block decoding on fuzzed shard
// images. The first input byte selects the mode: odd = reseal every checksum first (see
// tests/reliability/shard_reseal.h), so that mutations reach the structural checks and the zstd
// decoder behind the checksums; even = the bytes as they are. The manifest entry and schema the
// shard is checked against are taken from the image itself, as a consistent hostile dataset
// would supply them. Only shardkit::Error may come out; anything else, and any sanitizer report,
// is a finding.
#include <cstdint>
#include <string>
#include <vector>

#include "core/block_codec.h"
#include "core/error.h"
#include "core/shard_file.h"
#include "fuzz_util.h"
#include "reliability/shard_reseal.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace shardkit;
  if (size < 1) return 0;
  std::string image(reinterpret_cast<const char*>(data) + 1, size - 1);
  uint64_t footer_checksum = 0;
  if (data[0] & 1) footer_checksum = reliability::reseal_shard(image);
  if (image.size() < format::kHeaderSize + format::kFooterSize) return 0;
  const auto* p = reinterpret_cast<const unsigned char*>(image.data());
  if (!(data[0] & 1)) footer_checksum = format::load_le(p + image.size() - 16, 8);

  const format::ShardHeader h = format::ShardHeader::decode(p);
  Schema schema;
  try {
    const size_t n = std::min<size_t>(h.schema_size, image.size() - format::kHeaderSize);
    schema = Schema::parse(std::string_view(image).substr(format::kHeaderSize, n));
  } catch (const Error&) {
    schema = Schema({{"input_ids", DType::kU16, {12}, 0}});
  }
  // The manifest's own limits, tightened to keep one input's allocation small.
  const uint64_t rpb = h.records_per_block;
  if (rpb == 0 || rpb * schema.record_size() > (1u << 20) || h.record_count > (uint64_t{1} << 48))
    return 0;
  const ShardEntry entry{"fuzz.shard", h.record_count, image.size(), footer_checksum};

  static const std::string path = fuzz::scratch_path("fuzz.shard");
  fuzz::write_scratch(path, p, image.size());
  try {
    auto shard = ShardFile::open(path, schema, static_cast<uint32_t>(rpb), entry);
    BlockDecoder decoder;
    std::vector<unsigned char> out;
    for (uint64_t b = 0; b < shard->block_count(); ++b) {
      out.resize(size_t{shard->block_records(b)} * schema.record_size());
      try {
        shard->read_block(b, decoder, out.data());
      } catch (const Error& e) {
        if (e.block() != b) __builtin_trap();  // a block error must name its block
      }
    }
  } catch (const Error& e) {
    if (e.file() != path) __builtin_trap();  // every error names the file
  }
  return 0;
}
