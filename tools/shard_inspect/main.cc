// shard-inspect: what a dataset holds, whether it is intact, and what a loader will read.
#include "cli_main.h"
#include "shard_inspect/commands.h"

int main(int argc, char** argv) {
  CLI::App app{"shard-inspect: show, verify and dump shardkit datasets", "shard-inspect"};
  app.require_subcommand(1);
  for (const auto& setup : shard_inspect::command_registry()) setup(app);
  return shardkit::tools::run_cli(app, argc, argv, "shard-inspect",
                                  [] { return shard_inspect::exit_code(); });
}
