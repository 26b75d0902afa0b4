#include "torch_adapter/torch_loader.h"

#include <torch/types.h>

#include "core/error.h"
#include "loader/collator.h"
#include "loader/tensor_rule.h"

namespace shardkit::torch_adapter {

namespace {

c10::ScalarType scalar_type(loader::TensorType type) {
  switch (type) {
    case loader::TensorType::kBool:
      return c10::ScalarType::Bool;
    case loader::TensorType::kUInt8:
      return c10::ScalarType::Byte;
    case loader::TensorType::kInt32:
      return c10::ScalarType::Int;
    case loader::TensorType::kInt64:
      return c10::ScalarType::Long;
    case loader::TensorType::kFloat32:
      return c10::ScalarType::Float;
  }
  return c10::ScalarType::Long;
}

// The tensor of a column, by the rule the Python module follows too (loader/tensor_rule.h).
at::Tensor column_tensor(const std::shared_ptr<loader::Batch>& batch, loader::Column& col,
                         const TensorOptions& options) {
  const loader::TensorType type = loader::tensor_type(col, options.int_dtype == c10::ScalarType::Int
                                                               ? loader::IntOutput::kInt32
                                                               : loader::IntOutput::kInt64);
  const c10::ScalarType want = scalar_type(type);
  at::Tensor t;
  if (loader::same_bytes(col, type)) {
    // Zero-copy: the tensor keeps the whole batch alive.
    t = torch::from_blob(
        col.data(), col.shape(), [keep = batch](void*) {}, torch::dtype(want));
  } else {
    t = torch::empty(col.shape(), torch::dtype(want));
    loader::cast_elements(col.dtype(), col.data(), loader::tensor_dtype(type), t.data_ptr(),
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
