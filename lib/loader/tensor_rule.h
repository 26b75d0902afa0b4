// The one rule for the tensor type a batch column becomes, shared by the torch adapter and the
// Python module: floats stay float32; the [B, 1, T, T] document mask (bytes) becomes bool, as
// scaled_dot_product_attention takes it; flash-attn's cu_seqlens and max_seqlen stay int32; every
// other integer becomes int64 (HF's type), or int32 when asked. With IntOutput::kKeep integers
// keep their type where torch has it (uint8, int32, int64) and widen where it has not (uint16 to
// int32, uint32 to int64).
#pragma once

#include "loader/batch.h"
#include "loader/loader_options.h"

namespace shardkit::loader {

enum class TensorType { kBool, kUInt8, kInt32, kInt64, kFloat32 };

TensorType tensor_type(const Column& column, IntOutput int_output);
// Whether the column's bytes are already the tensor's (a view needs no copy).
bool same_bytes(const Column& column, TensorType type);
// The stored dtype with the tensor's element type (bool: uint8 bytes).
DType tensor_dtype(TensorType type);

}  // namespace shardkit::loader
