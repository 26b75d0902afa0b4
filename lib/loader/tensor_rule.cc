#include "loader/tensor_rule.h"

namespace shardkit::loader {

TensorType tensor_type(const Column& column, IntOutput int_output) {
  const DType d = column.dtype();
  if (d == DType::kF32) return TensorType::kFloat32;
  if (d == DType::kU8 && column.shape().size() == 4) return TensorType::kBool;
  if (d == DType::kI32 && (column.name() == "cu_seqlens" || column.name() == "max_seqlen"))
    return TensorType::kInt32;
  switch (int_output) {
    case IntOutput::kInt64:
      return TensorType::kInt64;
    case IntOutput::kInt32:
      return TensorType::kInt32;
    case IntOutput::kKeep:
      break;
  }
  switch (d) {
    case DType::kU8:
      return TensorType::kUInt8;
    case DType::kU16:
    case DType::kI32:
      return TensorType::kInt32;
    default:
      return TensorType::kInt64;
  }
}

DType tensor_dtype(TensorType type) {
  switch (type) {
    case TensorType::kBool:
    case TensorType::kUInt8:
      return DType::kU8;
    case TensorType::kInt32:
      return DType::kI32;
    case TensorType::kInt64:
      return DType::kI64;
    case TensorType::kFloat32:
      return DType::kF32;
  }
  return DType::kI64;
}

bool same_bytes(const Column& column, TensorType type) {
  return column.dtype() == tensor_dtype(type);
}

}  // namespace shardkit::loader
