#include "loader/document_boundaries.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "core/error.h"
#include "loader/collator.h"

namespace shardkit::loader {

DocumentBoundaries::DocumentBoundaries(const Field& ids, const Field* length, uint32_t separator,
                                       const DocumentOptions& options, DType position_dtype,
                                       const Field* starts)
    : ids_(ids),
      length_(length),
      separator_(separator),
      starts_(starts),
      options_(options),
      position_dtype_(position_dtype) {
  const uint32_t seq_len = ids.shape.at(0);
  if (options.attention_mask && seq_len > options.max_mask_length)
    throw Error(
        ErrorCode::kInvalidArgument, "",
        "a document attention mask is [B, 1, L, L] bytes and L = " + std::to_string(seq_len) +
            " exceeds max_mask_length " + std::to_string(options.max_mask_length) +
            ": use cu_seqlens with a varlen attention kernel, or raise the limit");
}

namespace {

constexpr size_t kChunk = 64;  // bytes of positions copied at a time

// 0, 1, 2, ... of each position dtype, long enough for any row plus one 64-byte chunk: a
// document's positions are a copy of the table's first (end - begin) entries.
template <typename Position>
const Position* ascending(size_t length) {
  thread_local std::vector<Position> table;
  length += kChunk / sizeof(Position);
  if (table.size() < length) {
    table.resize(length);
    for (size_t k = 0; k < length; ++k) table[k] = static_cast<Position>(k);
  }
  return table.data();
}

// Where one batch's documents go: positions, each token's document start (for the mask), and
// flash-attn's cu_seqlens. Rows are written in ascending address order, which lets a
// document's positions be copied in whole 64-byte chunks: the overshoot lands on tokens that a
// later document, the row's padding or the next row overwrites. `positions_end` stops it at the
// column's end.
template <typename Position>
struct DocumentSink {
  Position* positions = nullptr;  // this row's
  const Position* positions_end = nullptr;
  const Position* table = nullptr;
  uint32_t* starts = nullptr;  // this row's
  int32_t* cu = nullptr;       // the next cu_seqlens entry
  int64_t offset = 0;          // tokens of the batch before this row
  int32_t longest = 0;

  // Tokens [begin, end) of the row are one document.
  void document(size_t begin, size_t end) {
    const size_t count = end - begin;
    if (positions) {
      Position* out = positions + begin;
      constexpr size_t per_chunk = kChunk / sizeof(Position);
      if (out + count + per_chunk <= positions_end) {
        for (size_t k = 0; k < count; k += per_chunk) std::memcpy(out + k, table + k, kChunk);
      } else {
        std::memcpy(out, table, count * sizeof(Position));
      }
    }
    if (starts) std::fill(starts + begin, starts + end, static_cast<uint32_t>(begin));
    if (cu) {
      longest = std::max(longest, static_cast<int32_t>(count));
      *cu++ = static_cast<int32_t>(offset + static_cast<int64_t>(end));
    }
  }
};

// Bit j set where id j of the 16 at `ids` (unaligned, stored type Id) is `sep`.
template <typename Id>
uint32_t separator_mask16(const unsigned char* ids, Id sep) {
  uint32_t mask = 0;
  for (unsigned j = 0; j < 16; ++j) {
    Id id;
    std::memcpy(&id, ids + j * sizeof(Id), sizeof(Id));
    mask |= static_cast<uint32_t>(id == sep) << j;
  }
  return mask;
}

#if defined(__SSE2__)
// The two stored types of token ids (vocabularies up to and past 65,536), compared 8 or 4 at a
// time: the scalar loop was 4 cycles a token, as much as the rest of a batch's boundary work.
template <>
uint32_t separator_mask16<uint16_t>(const unsigned char* ids, uint16_t sep) {
  const __m128i s = _mm_set1_epi16(static_cast<short>(sep));
  const __m128i a = _mm_cmpeq_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(ids)), s);
  const __m128i b = _mm_cmpeq_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(ids + 16)), s);
  return static_cast<uint32_t>(_mm_movemask_epi8(_mm_packs_epi16(a, b)));
}

template <>
uint32_t separator_mask16<uint32_t>(const unsigned char* ids, uint32_t sep) {
  const __m128i s = _mm_set1_epi32(static_cast<int>(sep));
  auto eq = [&](size_t at) {
    return _mm_cmpeq_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(ids + at)), s);
  };
  const __m128i low = _mm_packs_epi32(eq(0), eq(16));
  const __m128i high = _mm_packs_epi32(eq(32), eq(48));
  return static_cast<uint32_t>(_mm_movemask_epi8(_mm_packs_epi16(low, high)));
}
#endif

// The documents of a row's first `len` tokens, read in their stored type (rows are not aligned
// to it): each ends after its separator, the last at len.
template <typename Id, typename Position>
void scan_separators(const unsigned char* ids, size_t len, uint32_t separator,
                     DocumentSink<Position>& sink) {
  if (separator > std::numeric_limits<Id>::max()) {  // no stored id can be the separator
    if (len > 0) sink.document(0, len);
    return;
  }
  const Id sep = static_cast<Id>(separator);
  size_t begin = 0;
  size_t k = 0;
  for (; k + 16 <= len; k += 16) {
    for (uint32_t mask = separator_mask16<Id>(ids + k * sizeof(Id), sep); mask != 0;
         mask &= mask - 1) {
      const size_t end = k + static_cast<size_t>(std::countr_zero(mask)) + 1;
      sink.document(begin, end);
      begin = end;
    }
  }
  for (; k < len; ++k) {
    Id id;
    std::memcpy(&id, ids + k * sizeof(Id), sizeof(Id));
    if (id == sep) {
      sink.document(begin, k + 1);
      begin = k + 1;
    }
  }
  if (begin < len) sink.document(begin, len);
}

// The same from a bitmap of document starts (bit k of byte k/8): a document ends before the
// next set bit, the last at len. Bit 0 is the row's first document whether set or not.
template <typename Position>
void scan_start_bits(const unsigned char* bits, size_t bit_count, size_t len,
                     DocumentSink<Position>& sink) {
  size_t begin = 0;
  const size_t limit = std::min(len, bit_count);
  for (size_t k = 1; k < limit;) {
    if ((k & 7) == 0 && k + 8 <= limit && bits[k >> 3] == 0) {  // a byte without starts
      k += 8;
      continue;
    }
    if ((bits[k >> 3] >> (k & 7)) & 1) {
      sink.document(begin, k);
      begin = k;
    }
    ++k;
  }
  if (begin < len) sink.document(begin, len);
}

}  // namespace

void DocumentBoundaries::collate(const std::vector<const unsigned char*>& rows, size_t width,
                                 Batch& out) const {
  const size_t n = rows.size();
  const size_t t = width;
  const auto shape = std::vector<int64_t>{static_cast<int64_t>(n), static_cast<int64_t>(t)};
  std::optional<Column> positions;
  if (options_.position_ids) positions.emplace("position_ids", position_dtype_, shape, out.buffers);
  // The batch's cu_seqlens, in a table the thread reuses; it grows before each row to hold a
  // document per token of that row, so the scan writes without a capacity check per document.
  thread_local std::vector<int32_t> cu;
  if (options_.cu_seqlens && cu.empty()) cu.resize(t + 1);
  // starts[i * t + k]: where the document of token k of row i begins; padding (after `length`)
  // counts as one more document so that its mask rows are never empty (SDPA would give NaN).
  std::vector<uint32_t> starts(options_.attention_mask ? n * t : 0);
  int64_t offset = 0;
  int32_t longest = 0;
  int32_t* cu_next = options_.cu_seqlens ? cu.data() : nullptr;
  if (cu_next) *cu_next++ = 0;

  auto scan_rows = [&](auto* column) {
    using Position = std::remove_pointer_t<decltype(column)>;
    DocumentSink<Position> sink;
    sink.positions_end = column ? column + n * t : nullptr;
    sink.table = column ? ascending<Position>(t) : nullptr;
    sink.cu = cu_next;
    for (size_t i = 0; i < n; ++i) {
      int64_t real = static_cast<int64_t>(t);
      if (length_) cast_elements(length_->dtype, rows[i] + length_->offset, DType::kI64, &real, 1);
      const size_t len = static_cast<size_t>(std::clamp<int64_t>(real, 0, static_cast<int64_t>(t)));
      if (sink.cu) {
        const size_t used = static_cast<size_t>(sink.cu - cu.data());
        if (cu.size() < used + len) {
          cu.resize(std::max(2 * cu.size(), used + len));
          sink.cu = cu.data() + used;
        }
      }
      sink.positions = column ? column + i * t : nullptr;
      sink.starts = starts.empty() ? nullptr : starts.data() + i * t;
      sink.offset = offset;
      if (starts_) {
        scan_start_bits(rows[i] + starts_->offset, starts_->element_count() * 8, len, sink);
      } else {
        const unsigned char* ids = rows[i] + ids_.offset;
        switch (ids_.dtype) {
          case DType::kU8:
            scan_separators<uint8_t>(ids, len, separator_, sink);
            break;
          case DType::kU16:
            scan_separators<uint16_t>(ids, len, separator_, sink);
            break;
          case DType::kU32:
            scan_separators<uint32_t>(ids, len, separator_, sink);
            break;
          case DType::kI32:
            scan_separators<int32_t>(ids, len, separator_, sink);
            break;
          default:
            scan_separators<int64_t>(ids, len, separator_, sink);
            break;
        }
      }
      if (sink.positions) std::fill(sink.positions + len, sink.positions + t, Position{0});
      if (sink.starts) std::fill(sink.starts + len, sink.starts + t, static_cast<uint32_t>(len));
      offset += static_cast<int64_t>(len);
    }
    cu_next = sink.cu;
    longest = sink.longest;
  };
  if (positions && position_dtype_ == DType::kI32)
    scan_rows(positions->as<int32_t>());
  else if (positions)
    scan_rows(positions->as<int64_t>());
  else
    scan_rows(static_cast<int64_t*>(nullptr));

  if (positions) out.columns.push_back(std::move(*positions));
  if (options_.cu_seqlens) {
    if (offset > INT32_MAX)
      throw Error(ErrorCode::kInvalidArgument, "",
                  "cu_seqlens is int32 and the batch holds " + std::to_string(offset) +
                      " tokens: use a smaller batch_size");
    const size_t entries = static_cast<size_t>(cu_next - cu.data());
    Column col("cu_seqlens", DType::kI32, {static_cast<int64_t>(entries)});
    std::copy(cu.data(), cu_next, col.as<int32_t>());
    out.columns.push_back(std::move(col));
    Column max("max_seqlen", DType::kI32, {});
    *max.as<int32_t>() = longest;
    out.columns.push_back(std::move(max));
  }
  if (options_.attention_mask) {
    Column col("attention_mask", DType::kU8,
               {static_cast<int64_t>(n), 1, static_cast<int64_t>(t), static_cast<int64_t>(t)},
               out.buffers);
    uint8_t* m = col.as<uint8_t>();
    for (size_t i = 0; i < n; ++i) {
      const uint32_t* s = starts.data() + i * t;
      for (size_t q = 0; q < t; ++q) {
        uint8_t* row = m + (i * t + q) * t;
        std::fill(row, row + s[q], uint8_t{0});
        std::fill(row + s[q], row + q + 1, uint8_t{1});
        std::fill(row + q + 1, row + t, uint8_t{0});
      }
    }
    out.columns.push_back(std::move(col));
  }
}

size_t DocumentBoundaries::max_row_bytes() const {
  const size_t l = ids_.shape.at(0);
  size_t bytes = 0;
  if (options_.position_ids) bytes += l * dtype_size(position_dtype_);
  if (options_.cu_seqlens) bytes += l * 4 + 4;
  if (options_.attention_mask) bytes += l * l;
  return bytes;
}

}  // namespace shardkit::loader
