// Batches become named tensors with the right dtypes and values, sharing the loader's buffers
// when the dtype allows, and outliving the loader.
#include <doctest/doctest.h>
#include <torch/types.h>

#include "../loader/loader_fixture.h"
#include "core/error.h"
#include "test_util.h"
#include "torch_adapter/torch_loader.h"

using namespace shardkit;
using namespace shardkit::torch_adapter;
using shardkit::testing::TempDir;
namespace t = shardkit::testing;

TEST_CASE("tensors carry the fixture's values, int64 by default, zero-copy") {
  TempDir tmp("ta");
  t::write_fixture(tmp / "ds", {.records = 300});
  loader::LoaderOptions o;
  o.batch_size = 16;
  o.seed = 3;
  o.include_metadata = true;
  TorchLoader tl(tmp / "ds", o);
  int64_t rows = 0;
  for (auto& batch : tl) {
    const torch::Tensor ids = batch["input_ids"];
    CHECK(ids.dtype() == torch::kInt64);
    CHECK(batch["labels"].dtype() == torch::kInt64);
    CHECK(batch["attention_mask"].sizes() == ids.sizes());
    CHECK(ids.size(0) == batch.size());
    for (int64_t r = 0; r < batch.size(); ++r) {
      const uint64_t rec = batch.records()[static_cast<size_t>(r)];
      CHECK(batch["labels"][r].item<int64_t>() == static_cast<int64_t>(rec));
      CHECK(batch["length"][r].item<int64_t>() == t::fixture_length(rec));
      CHECK(ids[r][1].item<int64_t>() == t::fixture_token(rec, 1));
      CHECK(batch["attention_mask"][r].sum().item<int64_t>() == t::fixture_length(rec));
    }
    rows += batch.size();
  }
  CHECK(rows == 300);
}

TEST_CASE("int32 output; tensors stay valid after the loader is gone; zero-copy aliasing") {
  TempDir tmp("ta");
  t::write_fixture(tmp / "ds", {.records = 64});
  std::optional<TensorBatch> kept;
  {
    loader::LoaderOptions o;
    o.batch_size = 8;
    o.shuffle = false;
    TorchLoader tl(tmp / "ds", o, {.int_dtype = torch::kInt32});
    kept = tl.next();
  }
  REQUIRE(kept);
  CHECK((*kept)["input_ids"].dtype() == torch::kInt32);
  CHECK_THROWS_AS((*kept)["nope"], shardkit::Error);
  for (int64_t r = 0; r < 8; ++r) CHECK((*kept)["labels"][r].item<int64_t>() == r);

  // A column already in the requested dtype is shared, not copied.
  loader::LoaderOptions o;
  o.batch_size = 8;
  loader::Loader raw(tmp / "ds", o);
  auto batch = raw.next();
  const void* buffer = batch->at("input_ids").data();
  TensorBatch tb = to_tensors(batch);
  CHECK(tb["input_ids"].data_ptr() == buffer);
}

TEST_CASE("document boundaries: a bool [B, 1, T, T] mask without a copy, int32 cu_seqlens") {
  // Fixture rows are one document ending with [SEP] = 2 (the only 2 in a row).
  TempDir tmp("ta");
  t::write_fixture(tmp / "ds", {.records = 40});
  loader::LoaderOptions o;
  o.batch_size = 8;
  o.documents.attention_mask = true;
  o.documents.cu_seqlens = true;
  o.documents.separator_id = 2;
  TorchLoader tl(tmp / "ds", o);
  for (auto& batch : tl) {
    const torch::Tensor mask = batch["attention_mask"];
    const int64_t width = batch["input_ids"].size(1);
    REQUIRE(mask.dtype() == torch::kBool);
    REQUIRE(mask.sizes() == torch::IntArrayRef{batch.size(), 1, width, width});
    CHECK(batch["cu_seqlens"].dtype() == torch::kInt32);
    int64_t total = 0;
    for (int64_t r = 0; r < batch.size(); ++r) {
      const int64_t len = t::fixture_length(batch.records()[static_cast<size_t>(r)]);
      total += len;
      const torch::Tensor causal = torch::ones({width, width}, torch::kBool).tril();
      const torch::Tensor real = torch::arange(width) < len;
      const torch::Tensor same = real.unsqueeze(1) == real.unsqueeze(0);
      CHECK(torch::equal(mask[r][0], causal.logical_and(same)));
    }
    CHECK(batch["cu_seqlens"][-1].item<int64_t>() == total);
  }
}

TEST_CASE("a mixture: source tensor per row, labels from the right dataset, exact shares") {
  TempDir tmp("tamix");
  t::write_fixture(tmp / "a", {.records = 200});
  t::write_fixture(tmp / "b", {.records = 90, .label_base = 5000});
  loader::LoaderOptions o;
  o.batch_size = 10;
  o.seed = 4;
  o.source_field = true;
  o.max_samples = 400;
  TorchLoader tl(std::vector<loader::MixtureSource>{{(tmp / "a").string(), 3.0, {}, {}},
                                                    {(tmp / "b").string(), 1.0, {}, {}}},
                 o, {.int_dtype = torch::kInt32});
  int64_t seen[2] = {0, 0};
  int64_t k = 0;
  for (auto& batch : tl) {
    const torch::Tensor source = batch["source"];
    CHECK(source.dtype() == torch::kInt32);
    for (int64_t r = 0; r < batch.size(); ++r) {
      const uint32_t s = batch.sources()[static_cast<size_t>(r)];
      REQUIRE(source[r].item<int32_t>() == static_cast<int32_t>(s));
      const int64_t rec = static_cast<int64_t>(batch.records()[static_cast<size_t>(r)]);
      CHECK(batch["labels"][r].item<int32_t>() == (s ? 5000 : 0) + rec);
      ++seen[s];
      ++k;
      CHECK(std::abs(double(seen[1]) - 0.25 * double(k)) < 1.0);
    }
  }
  CHECK(seen[0] == 300);
  CHECK(seen[1] == 100);
}
