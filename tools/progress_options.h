// --progress and --progress-interval, spelled and explained the same way in every command that
// reports progress (shardify, shardify merge, shard-inspect verify and report).
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "core/progress.h"

namespace shardkit::tools {

inline void add_progress_options(CLI::App* cmd, ProgressOptions& options) {
  cmd->add_option_function<std::string>(
         "--progress",
         [&options](const std::string& mode) { options.mode = *parse_progress_mode(mode); },
         "auto: a line redrawn in place on a terminal, elsewhere (a log, a file, a pipe) a line "
         "every --progress-interval seconds with done/total, rate and ETA; always: those lines "
         "and a last one, terminal or not; never")
      ->check(CLI::IsMember({"auto", "always", "never"}))
      ->default_str("auto");
  cmd->add_option("--progress-interval", options.interval_seconds,
                  "Seconds between progress lines when they are not redrawn in place")
      ->check(CLI::Validator([](std::string& text) { return progress_interval_problem(text); },
                             "SECONDS>0"))
      ->capture_default_str();
}

}  // namespace shardkit::tools
