#include "core/source_option_table.h"

namespace shardkit {
namespace {

using options::Option;
using options::option;
using O = SourceOptions;

std::vector<Option<O>> entries() {
  return {
      options::choice_option<O>(
          "read_mode",
          "How local shard files are read: pread (RSS bounded by the cache, an error if a file is "
          "truncated underfoot) or mmap (file pages count in RSS; SIGBUS on truncation)",
          [](auto& o) -> auto& { return o.read_mode; },
          options::named(read_mode_name, {ReadMode::kPread, ReadMode::kMmap})),
      option<O>(
          "remote_concurrency", "Remote datasets: range requests in flight at once",
          [](auto& o) -> auto& { return o.remote_concurrency; })
          .range(1, 1024),
      options::path_option<O>(
          "cache_dir",
          "Remote datasets: an on-disk cache of fetched blocks, shared by the processes of a "
          "node; the cache keeps its files in CACHE_DIR/shardkit-cache and touches nothing else",
          [](auto& o) -> auto& { return o.cache_dir; }),
      option<O>(
          "cache_limit", "Bytes the on-disk cache may hold",
          [](auto& o) -> auto& { return o.cache_limit; })
          .at_least(1)
          .defaults_to("4 GiB"),
      option<O>(
          "remote_retries",
          "Remote datasets: retries of a request after timeouts, 5xx and short reads",
          [](auto& o) -> auto& { return o.remote_retries; })
          .range(0, 100),
      option<O>(
          "remote_timeout_ms", "Remote datasets: per-request timeout in milliseconds",
          [](auto& o) -> auto& { return o.remote_timeout_ms; })
          .at_least(1),
      option<O>(
          "max_manifest_bytes",
          "Remote datasets: the largest manifest.json read (it is held in memory whole); a "
          "larger one is refused naming this option; 0: no limit",
          [](auto& o) -> auto& { return o.max_manifest_bytes; })
          .defaults_to("256 MiB"),
  };
}

}  // namespace

const options::OptionTable<SourceOptions>& source_option_table() {
  static const options::OptionTable<SourceOptions> table(entries());
  return table;
}

}  // namespace shardkit
