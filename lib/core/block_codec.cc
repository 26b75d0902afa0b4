#include "core/block_codec.h"

#include <zstd.h>

#include <cstring>
#include <type_traits>

#include "core/checksum.h"
#include "core/error.h"

namespace shardkit {
namespace {

// Moves the bytes of one field between the record-major layout and the plane layout. The
// element size is a template parameter so the inner loop over a record's elements is a
// fixed-width gather/scatter the compiler vectorises.
template <bool kToPlanes, size_t kElementSize>
void transpose_field_fixed(const Field& f, size_t record_size, size_t n, const unsigned char* in,
                           unsigned char* out) {
  const size_t elements = f.element_count();
  const size_t plane = n * elements;  // bytes in one byte plane of this field
  using Word = std::conditional_t<
      kElementSize == 1, uint8_t,
      std::conditional_t<kElementSize == 2, uint16_t,
                         std::conditional_t<kElementSize == 4, uint32_t, uint64_t>>>;
  unsigned char* planes_out = out + n * f.offset;
  const unsigned char* planes_in = in + n * f.offset;
  for (size_t r = 0; r < n; ++r) {
    const size_t rec = r * record_size + f.offset;
    const size_t pos = r * elements;
    // One pass per record: each element is split into (or assembled from) its byte planes.
    for (size_t e = 0; e < elements; ++e) {
      if constexpr (kToPlanes) {
        Word w;
        std::memcpy(&w, in + rec + e * kElementSize, kElementSize);
        for (size_t b = 0; b < kElementSize; ++b)
          planes_out[b * plane + pos + e] = static_cast<unsigned char>(w >> (8 * b));
      } else {
        Word w = 0;
        for (size_t b = 0; b < kElementSize; ++b)
          w |= static_cast<Word>(static_cast<Word>(planes_in[b * plane + pos + e]) << (8 * b));
        std::memcpy(out + rec + e * kElementSize, &w, kElementSize);
      }
    }
  }
}

template <bool kToPlanes>
void transpose_field(const Field& f, size_t record_size, size_t n, const unsigned char* in,
                     unsigned char* out) {
  switch (dtype_size(f.dtype)) {
    case 1:
      return transpose_field_fixed<kToPlanes, 1>(f, record_size, n, in, out);
    case 2:
      return transpose_field_fixed<kToPlanes, 2>(f, record_size, n, in, out);
    case 4:
      return transpose_field_fixed<kToPlanes, 4>(f, record_size, n, in, out);
    case 8:
      return transpose_field_fixed<kToPlanes, 8>(f, record_size, n, in, out);
  }
}

}  // namespace

void apply_byte_planes(const Schema& schema, const unsigned char* records, size_t n,
                       unsigned char* out) {
  for (const Field& f : schema.fields())
    transpose_field<true>(f, schema.record_size(), n, records, out);
}

void remove_byte_planes(const Schema& schema, const unsigned char* planes, size_t n,
                        unsigned char* out) {
  for (const Field& f : schema.fields())
    transpose_field<false>(f, schema.record_size(), n, planes, out);
}

BlockEncoder::BlockEncoder(const Schema& schema, format::BlockFilter filter, int zstd_level)
    : schema_(schema), filter_(filter), level_(zstd_level), cctx_(ZSTD_createCCtx()) {}

BlockEncoder::~BlockEncoder() { ZSTD_freeCCtx(static_cast<ZSTD_CCtx*>(cctx_)); }

EncodedBlock BlockEncoder::encode(const unsigned char* records, size_t record_count) {
  const size_t raw_size = record_count * schema_.record_size();
  const unsigned char* payload = records;
  if (filter_ == format::BlockFilter::kBytePlanes) {
    filtered_.resize(raw_size);
    apply_byte_planes(schema_, records, record_count, filtered_.data());
    payload = filtered_.data();
  }
  EncodedBlock block;
  block.bytes.resize(ZSTD_compressBound(raw_size));
  auto* cctx = static_cast<ZSTD_CCtx*>(cctx_);
  ZSTD_CCtx_reset(cctx, ZSTD_reset_session_and_parameters);
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, level_);
  // The frame needs no checksum of its own (the block checksum covers it) but must record its
  // content size, which the decoder checks against the schema.
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 0);
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_contentSizeFlag, 1);
  size_t n = ZSTD_compress2(cctx, block.bytes.data(), block.bytes.size(), payload, raw_size);
  if (ZSTD_isError(n))
    throw Error(ErrorCode::kIo, "",
                std::string("zstd compression failed: ") + ZSTD_getErrorName(n));
  if (n < raw_size) {
    block.bytes.resize(n);
    block.encoding = format::BlockEncoding::kZstd;
  } else {
    block.bytes.assign(payload, payload + raw_size);
    block.encoding = format::BlockEncoding::kRaw;
  }
  block.checksum = xxh3_64(block.bytes.data(), block.bytes.size());
  return block;
}

BlockDecoder::BlockDecoder() : dctx_(ZSTD_createDCtx()) {}
BlockDecoder::~BlockDecoder() { ZSTD_freeDCtx(static_cast<ZSTD_DCtx*>(dctx_)); }

void BlockDecoder::decode(const Schema& schema, format::BlockFilter filter,
                          format::BlockEncoding encoding, const unsigned char* stored,
                          size_t stored_size, size_t record_count, unsigned char* out) {
  const size_t raw_size = record_count * schema.record_size();
  const bool planes = filter == format::BlockFilter::kBytePlanes;
  unsigned char* target = out;
  if (planes) {
    scratch_.resize(raw_size);
    target = scratch_.data();
  }
  if (encoding == format::BlockEncoding::kRaw) {
    if (stored_size != raw_size)
      throw Error(ErrorCode::kCorrupt, "",
                  "raw block holds " + std::to_string(stored_size) + " bytes, expected " +
                      std::to_string(raw_size));
    std::memcpy(target, stored, raw_size);
  } else if (encoding == format::BlockEncoding::kZstd) {
    unsigned long long content = ZSTD_getFrameContentSize(stored, stored_size);
    if (content != raw_size)
      throw Error(ErrorCode::kCorrupt, "",
                  "zstd frame declares " +
                      (content >= ZSTD_CONTENTSIZE_ERROR ? std::string("no valid size")
                                                         : std::to_string(content) + " bytes") +
                      ", expected " + std::to_string(raw_size));
    size_t n =
        ZSTD_decompressDCtx(static_cast<ZSTD_DCtx*>(dctx_), target, raw_size, stored, stored_size);
    if (ZSTD_isError(n) || n != raw_size)
      throw Error(ErrorCode::kCorrupt, "",
                  std::string("zstd decompression failed: ") +
                      (ZSTD_isError(n) ? ZSTD_getErrorName(n) : "short output"));
  } else {
    throw Error(ErrorCode::kCorrupt, "",
                "unknown block encoding " + std::to_string(static_cast<int>(encoding)));
  }
  if (planes) remove_byte_planes(schema, target, record_count, out);
}

std::string_view block_filter_name(format::BlockFilter filter) {
  return filter == format::BlockFilter::kBytePlanes ? "byteplanes" : "none";
}

std::optional<format::BlockFilter> parse_block_filter(std::string_view name) {
  if (name == "none") return format::BlockFilter::kNone;
  if (name == "byteplanes") return format::BlockFilter::kBytePlanes;
  return std::nullopt;
}

}  // namespace shardkit
