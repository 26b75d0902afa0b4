// Shared by the remote tests: a fixture dataset, the batches a loader yields, comparisons.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "../loader/loader_fixture.h"
#include "loader/loader.h"
#include "servers.h"
#include "test_util.h"

namespace shardkit::testing {

// A batch as comparable values: records, then every column's bytes.
inline std::vector<std::string> flatten(const loader::Batch& b) {
  std::vector<std::string> out;
  out.emplace_back(reinterpret_cast<const char*>(b.records.data()),
                   b.records.size() * sizeof(uint64_t));
  for (const loader::Column& c : b.columns)
    out.emplace_back(static_cast<const char*>(c.data()), c.bytes());
  return out;
}

inline std::vector<std::vector<std::string>> all_batches(loader::Loader& l) {
  std::vector<std::vector<std::string>> out;
  while (auto b = l.next()) out.push_back(flatten(*b));
  return out;
}

inline loader::LoaderOptions remote_options(uint64_t seed = 7) {
  loader::LoaderOptions o;
  o.batch_size = 32;
  o.seed = seed;
  o.threads = 2;
  o.memory_budget = 2 << 20;  // several windows per epoch
  o.source.remote_retries = 8;
  o.source.remote_timeout_ms = 5000;
  return o;
}

// 20,000 records in 4 KiB blocks, 128 KiB shards: about 40 shards.
inline void write_remote_fixture(const std::filesystem::path& dir) {
  write_fixture(dir, {.records = 20000, .block_bytes = 4096, .shard_bytes = 128 << 10});
}

// The remote fixture, written under a temporary directory and served by nginx.
struct ServedDataset {
  TempDir tmp{"http"};
  std::filesystem::path root = tmp / "www";
  std::unique_ptr<Nginx> nginx;
  ServedDataset() {
    std::filesystem::create_directories(root);
    write_remote_fixture(root / "ds");
    nginx = std::make_unique<Nginx>(root, tmp / "nginx");
  }
  std::filesystem::path local() const { return root / "ds"; }
  std::string url() const { return nginx->url("ds"); }
};

}  // namespace shardkit::testing
