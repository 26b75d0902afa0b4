// A tool's subcommands register themselves here, one file each, so adding a command touches no
// other file. Each executable (shardify, shard-inspect) links its own commands, so each has its
// own registry.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <vector>

namespace shardkit::tools {

using CommandSetup = std::function<void(CLI::App& app)>;

inline std::vector<CommandSetup>& command_registry() {
  static std::vector<CommandSetup> commands;
  return commands;
}

struct RegisterCommand {
  explicit RegisterCommand(CommandSetup setup) { command_registry().push_back(std::move(setup)); }
};

// What main() returns once the command's callback has run (e.g. verify sets 1 on a fault).
inline int& exit_code() {
  static int code = 0;
  return code;
}

}  // namespace shardkit::tools
