// The source options (core/source_option_table.h: remote timeouts and retries, the cache, the
// read mode) as flags of every command that reads a dataset, so that a URL that never answers
// waits as long as the user says. Each command applies its flags before it runs; every read it
// makes opens with them.
#pragma once

#include <functional>
#include <memory>

#include "core/dataset.h"
#include "core/source_option_table.h"
#include "option_flags.h"

namespace shard_inspect {

// What the running command reads datasets with.
inline shardkit::SourceOptions& source_options() {
  static shardkit::SourceOptions options;
  return options;
}

inline shardkit::DatasetOptions dataset_options() {
  shardkit::DatasetOptions options;
  options.source = source_options();
  return options;
}

// Adds the flags to `cmd`; the command's callback calls the result first.
inline std::function<void()> add_source_flags(CLI::App* cmd) {
  auto flags = std::make_shared<shardkit::tools::OptionFlags<shardkit::SourceOptions>>(
      cmd, shardkit::source_option_table());
  return [flags] { flags->apply(source_options()); };
}

}  // namespace shard_inspect
