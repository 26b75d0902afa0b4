#include "torch_adapter/torch_loader.h"

#include <torch/torch.h>

#include "core/error.h"
#include "loader/collator.h"

namespace shardkit::torch_adapter {

namespace {

// The torch dtype with the same bytes, when there is one (torch 1.x has no uint16/uint32).
std::optional<c10::ScalarType> same_bytes(DType d) {
  switch (d) {
    case DType::kU8:
      return c10::ScalarType::Byte;
    case DType::kI32:
      return c10::ScalarType::Int;
    case DType::kI64:
      return c10::ScalarType::Long;
    case DType::kF32:
      return c10::ScalarType::Float;
    default:
      return std::nullopt;
  }
}

at::Tensor column_tensor(const std::shared_ptr<loader::Batch>& batch, loader::Column& col,
                         const TensorOptions& options) {
  const std::vector<int64_t>& shape = col.shape();
  const bool is_float = col.dtype() == DType::kF32;
  // LoaderOptions::documents.attention_mask: [B, 1, T, T] bytes that SDPA takes as a bool mask.
  const bool bool_mask = col.dtype() == DType::kU8 && shape.size() == 4;
  // flash-attn's varlen kernels take int32 offsets only.
  const bool varlen =
      col.dtype() == DType::kI32 && (col.name() == "cu_seqlens" || col.name() == "max_seqlen");
  const c10::ScalarType want = is_float    ? c10::ScalarType::Float
                               : bool_mask ? c10::ScalarType::Bool
                               : varlen    ? c10::ScalarType::Int
                                           : options.int_dtype;
  at::Tensor t;
  if (auto same = same_bytes(col.dtype()); bool_mask || (same && *same == want)) {
    // Zero-copy: the tensor keeps the whole batch alive.
    t = torch::from_blob(
        col.data(), shape, [keep = batch](void*) {}, torch::dtype(want));
  } else {
    t = torch::empty(shape, torch::dtype(want));
    loader::cast_elements(col.dtype(), col.data(),
                          want == c10::ScalarType::Int ? DType::kI32 : DType::kI64, t.data_ptr(),
                          col.elements());
  }
  if (options.device.is_cuda()) {
    if (options.pin_memory) t = t.pin_memory();
    t = t.to(options.device, /*non_blocking=*/options.non_blocking);
  }
  return t;
}

}  // namespace

at::Tensor& TensorBatch::operator[](const std::string& name) {
  for (auto& [n, t] : items_)
    if (n == name) return t;
  throw Error(ErrorCode::kInvalidArgument, "", "batch has no tensor '" + name + "'");
}

const at::Tensor& TensorBatch::operator[](const std::string& name) const {
  return const_cast<TensorBatch&>(*this)[name];
}

bool TensorBatch::contains(const std::string& name) const {
  for (const auto& [n, t] : items_)
    if (n == name) return true;
  return false;
}

TensorBatch to_tensors(std::shared_ptr<loader::Batch> batch, const TensorOptions& options) {
  if (options.int_dtype != c10::ScalarType::Long && options.int_dtype != c10::ScalarType::Int)
    throw Error(ErrorCode::kInvalidArgument, "",
                "int_dtype must be torch::kInt64 or torch::kInt32");
  TensorBatch out;
  out.records_ = batch->records;
  out.sources_ = batch->sources;
  for (loader::Column& col : batch->columns)
    out.items_.emplace_back(col.name(), column_tensor(batch, col, options));
  return out;
}

namespace {

loader::LoaderOptions with_int_output(loader::LoaderOptions options, const TensorOptions& t) {
  options.int_output =
      t.int_dtype == c10::ScalarType::Int ? loader::IntOutput::kInt32 : loader::IntOutput::kInt64;
  return options;
}

}  // namespace

TorchLoader::TorchLoader(const std::filesystem::path& dir, loader::LoaderOptions options,
                         TensorOptions tensor_options)
    : loader_(std::make_unique<loader::Loader>(
          dir, with_int_output(std::move(options), tensor_options))),
      tensor_options_(tensor_options) {}

TorchLoader::TorchLoader(const std::vector<loader::MixtureSource>& sources,
                         loader::LoaderOptions options, TensorOptions tensor_options)
    : loader_(std::make_unique<loader::Loader>(
          sources, with_int_output(std::move(options), tensor_options))),
      tensor_options_(tensor_options) {}

std::optional<TensorBatch> TorchLoader::next() {
  auto batch = loader_->next();
  if (!batch) return std::nullopt;
  return to_tensors(std::move(batch), tensor_options_);
}

void TorchLoader::Iterator::advance() {
  current_ = owner_->next();
  if (!current_) owner_ = nullptr;
}

}  // namespace shardkit::torch_adapter
