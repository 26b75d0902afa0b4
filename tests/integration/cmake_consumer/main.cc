// Reads a dataset through the installed headers and libraries: prints records, batches and the
// sum of all labels (which the test compares with shard-inspect's dump).
#include <torch/torch.h>

#include <cstdio>

#include "core/dataset.h"
#include "torch_adapter/torch_loader.h"

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  shardkit::Dataset ds = shardkit::Dataset::open(argv[1]);
  shardkit::loader::LoaderOptions options;
  options.batch_size = 8;
  options.shuffle = true;
  shardkit::torch_adapter::TorchLoader loader(argv[1], options);
  int64_t batches = 0, label_sum = 0;
  for (auto& batch : loader) {
    ++batches;
    label_sum += batch["labels"].sum().item<int64_t>();
  }
  std::printf("records %llu batches %lld label_sum %lld\n",
              static_cast<unsigned long long>(ds.size()), static_cast<long long>(batches),
              static_cast<long long>(label_sum));
  return 0;
}
