// Batches as named torch::Tensors for libtorch training loops.
//
//   shardkit::torch_adapter::TorchLoader loader(dir, loader_options, {.device = torch::kCUDA});
//   for (int epoch = 0; epoch < 3; ++epoch) {
//     loader.set_epoch(epoch);
//     for (auto& batch : loader) model.step(batch["input_ids"], batch["labels"]);
//   }
//
// Tensors share the loader's batch buffers (no copy) when the stored field already has the
// requested dtype or the loader widened it on assembly, which it does by default; the buffers
// live as long as any tensor does. With a CUDA device the batch is staged in pinned host
// memory and copied with non_blocking=true.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>
#include <c10/core/ScalarType.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "loader/loader.h"

namespace shardkit::torch_adapter {

struct TensorOptions {
  c10::ScalarType int_dtype = c10::ScalarType::Long;  // HF convention; or Int
  c10::Device device = c10::Device(c10::DeviceType::CPU);
  bool pin_memory = true;    // only used for CUDA devices
  bool non_blocking = true;  // only used for CUDA devices
};

class TensorBatch {
 public:
  // Throws shardkit::Error(kInvalidArgument) naming the field when absent.
  at::Tensor& operator[](const std::string& name);
  const at::Tensor& operator[](const std::string& name) const;
  bool contains(const std::string& name) const;
  const std::vector<std::pair<std::string, at::Tensor>>& items() const { return items_; }
  int64_t size() const { return static_cast<int64_t>(records_.size()); }
  const std::vector<uint64_t>& records() const { return records_; }
  const std::vector<uint32_t>& sources() const { return sources_; }  // each row's source

 private:
  friend TensorBatch to_tensors(std::shared_ptr<loader::Batch>, const TensorOptions&);
  std::vector<std::pair<std::string, at::Tensor>> items_;
  std::vector<uint64_t> records_;
  std::vector<uint32_t> sources_;
};

// Integer columns become `int_dtype` (a copy only when the column has another dtype).
TensorBatch to_tensors(std::shared_ptr<loader::Batch> batch, const TensorOptions& options = {});

class TorchLoader {
 public:
  // options.int_output is set from tensor_options.int_dtype so tensors need no conversion.
  TorchLoader(const std::filesystem::path& dir, loader::LoaderOptions options,
              TensorOptions tensor_options = {});
  // A weighted mixture (loader/mixture.h); options.source_field adds batch["source"].
  TorchLoader(const std::vector<loader::MixtureSource>& sources, loader::LoaderOptions options,
              TensorOptions tensor_options = {});

  loader::Loader& loader() { return *loader_; }
  void set_epoch(uint64_t epoch) { loader_->set_epoch(epoch); }
  uint64_t batches() const { return loader_->batches(); }
  loader::LoaderState state() const { return loader_->state(); }
  void restore(const loader::LoaderState& state) { loader_->restore(state); }
  std::optional<TensorBatch> next();

  // Iterates what is left of the current epoch.
  class Iterator {
   public:
    Iterator() = default;
    explicit Iterator(TorchLoader* owner) : owner_(owner) { advance(); }
    TensorBatch& operator*() { return *current_; }
    TensorBatch* operator->() { return &*current_; }
    Iterator& operator++() {
      advance();
      return *this;
    }
    bool operator!=(const Iterator& other) const { return owner_ != other.owner_; }
    bool operator==(const Iterator& other) const { return owner_ == other.owner_; }

   private:
    void advance();
    TorchLoader* owner_ = nullptr;
    std::optional<TensorBatch> current_;
  };
  Iterator begin() { return Iterator(this); }
  Iterator end() { return Iterator(); }

 private:
  std::unique_ptr<loader::Loader> loader_;
  TensorOptions tensor_options_;
};

}  // namespace shardkit::torch_adapter
