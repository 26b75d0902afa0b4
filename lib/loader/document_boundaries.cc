#include "loader/document_boundaries.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>

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

// 0, 1, 2, ... of each position dtype, long enough for any row: a document's positions are a
// copy of its first (end - begin) entries.
template <typename Position>
const Position* ascending(size_t length) {
  thread_local std::vector<Position> table;
  if (table.size() < length) {
    table.resize(length);
    for (size_t k = 0; k < length; ++k) table[k] = static_cast<Position>(k);
  }
  return table.data();
}

// Writes one document, tokens [begin, end) of a row: positions restarting at 0, each token's
// document start, and its end (cu_seqlens).
template <typename Position>
void emit_document(size_t begin, size_t end, Position* positions, uint32_t* starts,
                   std::vector<int32_t>* cu, int64_t offset, int32_t& longest) {
  if (positions)
    std::memcpy(positions + begin, ascending<Position>(end), (end - begin) * sizeof(Position));
  if (starts) std::fill(starts + begin, starts + end, static_cast<uint32_t>(begin));
  if (cu) {
    longest = std::max(longest, static_cast<int32_t>(end - begin));
    cu->push_back(static_cast<int32_t>(offset + static_cast<int64_t>(end)));
  }
}

// The documents of a row's first `len` tokens, read in their stored type (rows are not aligned
// to it): each ends after its separator, the last at len.
template <typename Id, typename Position>
void scan_separators(const unsigned char* ids, size_t len, uint32_t separator, Position* positions,
                     uint32_t* starts, std::vector<int32_t>* cu, int64_t offset, int32_t& longest) {
  if (separator > std::numeric_limits<Id>::max()) {  // no stored id can be the separator
    if (len > 0) emit_document(0, len, positions, starts, cu, offset, longest);
    return;
  }
  const Id sep = static_cast<Id>(separator);
  size_t begin = 0;
  for (size_t k = 0; k < len; ++k) {
    Id id;
    std::memcpy(&id, ids + k * sizeof(Id), sizeof(Id));
    if (id == sep) {
      emit_document(begin, k + 1, positions, starts, cu, offset, longest);
      begin = k + 1;
    }
  }
  if (begin < len) emit_document(begin, len, positions, starts, cu, offset, longest);
}

// The same from a bitmap of document starts (bit k of byte k/8): a document ends before the
// next set bit, the last at len. Bit 0 is the row's first document whether set or not.
template <typename Position>
void scan_start_bits(const unsigned char* bits, size_t bit_count, size_t len, Position* positions,
                     uint32_t* starts, std::vector<int32_t>* cu, int64_t offset, int32_t& longest) {
  size_t begin = 0;
  const size_t limit = std::min(len, bit_count);
  for (size_t k = 1; k < limit;) {
    if ((k & 7) == 0 && k + 8 <= limit && bits[k >> 3] == 0) {  // a byte without starts
      k += 8;
      continue;
    }
    if ((bits[k >> 3] >> (k & 7)) & 1) {
      emit_document(begin, k, positions, starts, cu, offset, longest);
      begin = k;
    }
    ++k;
  }
  if (begin < len) emit_document(begin, len, positions, starts, cu, offset, longest);
}

}  // namespace

void DocumentBoundaries::collate(const std::vector<const unsigned char*>& rows, size_t width,
                                 Batch& out) const {
  const size_t n = rows.size();
  const size_t t = width;
  const auto shape = std::vector<int64_t>{static_cast<int64_t>(n), static_cast<int64_t>(t)};
  std::optional<Column> positions;
  if (options_.position_ids) positions.emplace("position_ids", position_dtype_, shape);
  std::vector<int32_t> cu;
  if (options_.cu_seqlens) cu.push_back(0);
  // starts[i * t + k]: where the document of token k of row i begins; padding (after `length`)
  // counts as one more document so that its mask rows are never empty (SDPA would give NaN).
  std::vector<uint32_t> starts(options_.attention_mask ? n * t : 0);
  int64_t offset = 0;
  int32_t longest = 0;
  for (size_t i = 0; i < n; ++i) {
    int64_t real = static_cast<int64_t>(t);
    if (length_) cast_elements(length_->dtype, rows[i] + length_->offset, DType::kI64, &real, 1);
    const size_t len = static_cast<size_t>(std::clamp<int64_t>(real, 0, static_cast<int64_t>(t)));
    const unsigned char* bits = starts_ ? rows[i] + starts_->offset : nullptr;
    const size_t bit_count = starts_ ? starts_->element_count() * 8 : 0;
    uint32_t* row_starts = starts.empty() ? nullptr : starts.data() + i * t;
    std::vector<int32_t>* row_cu = options_.cu_seqlens ? &cu : nullptr;
    auto scan_stored_ids = [&](const unsigned char* ids, size_t len, auto* row, uint32_t* starts,
                               std::vector<int32_t>* cu, int64_t offset, int32_t& longest) {
      auto as = [&](auto id) {
        scan_separators<decltype(id)>(ids, len, separator_, row, starts, cu, offset, longest);
      };
      switch (ids_.dtype) {
        case DType::kU8:
          return as(uint8_t{});
        case DType::kU16:
          return as(uint16_t{});
        case DType::kU32:
          return as(uint32_t{});
        case DType::kI32:
          return as(int32_t{});
        default:
          return as(int64_t{});
      }
    };
    auto scan = [&](auto* p) {
      using T = std::remove_pointer_t<decltype(p)>;
      T* row = p ? p + i * t : nullptr;
      if (bits)
        scan_start_bits(bits, bit_count, len, row, row_starts, row_cu, offset, longest);
      else
        scan_stored_ids(rows[i] + ids_.offset, len, row, row_starts, row_cu, offset, longest);
      if (row) std::fill(row + len, row + t, T{0});
    };
    if (positions && position_dtype_ == DType::kI32)
      scan(positions->as<int32_t>());
    else if (positions)
      scan(positions->as<int64_t>());
    else
      scan(static_cast<int64_t*>(nullptr));
    if (row_starts) std::fill(row_starts + len, row_starts + t, static_cast<uint32_t>(len));
    offset += static_cast<int64_t>(len);
  }

  if (positions) out.columns.push_back(std::move(*positions));
  if (options_.cu_seqlens) {
    if (offset > INT32_MAX)
      throw Error(ErrorCode::kInvalidArgument, "",
                  "cu_seqlens is int32 and the batch holds " + std::to_string(offset) +
                      " tokens: use a smaller batch_size");
    Column col("cu_seqlens", DType::kI32, {static_cast<int64_t>(cu.size())});
    std::copy(cu.begin(), cu.end(), col.as<int32_t>());
    out.columns.push_back(std::move(col));
    Column max("max_seqlen", DType::kI32, {});
    *max.as<int32_t>() = longest;
    out.columns.push_back(std::move(max));
  }
  if (options_.attention_mask) {
    Column col("attention_mask", DType::kU8,
               {static_cast<int64_t>(n), 1, static_cast<int64_t>(t), static_cast<int64_t>(t)});
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
