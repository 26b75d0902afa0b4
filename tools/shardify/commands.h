// shardify's subcommands (convert is the default, tokenize, merge) register themselves here,
// one file each.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <vector>

namespace shardify_cli {

using CommandSetup = std::function<void(CLI::App& app)>;

inline std::vector<CommandSetup>& command_registry() {
  static std::vector<CommandSetup> commands;
  return commands;
}

struct RegisterCommand {
  explicit RegisterCommand(CommandSetup setup) { command_registry().push_back(std::move(setup)); }
};

// What main() returns once the command's callback has run.
inline int& exit_code() {
  static int code = 0;
  return code;
}

}  // namespace shardify_cli
