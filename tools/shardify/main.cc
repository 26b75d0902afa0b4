// shardify: tokenize raw corpora once into shardkit datasets.
#include "cli_main.h"
#include "core/mapped_file.h"
#include "core/staged_directory.h"
#include "shardify/commands.h"

int main(int argc, char** argv) {
  // Ctrl-C, SIGTERM, a hangup and a closed pipe remove the dataset being built (set before any
  // thread starts).
  shardkit::remove_staging_on_signals();
  // Inputs are mapped, not read: an input another program shortens meanwhile is then an error
  // naming it, not a SIGBUS.
  shardkit::guard_mapped_files();
  CLI::App app{"shardify: tokenize corpora into compressed, checksummed shard datasets",
               "shardify"};
  for (const auto& setup : shardify_cli::command_registry()) setup(app);
  return shardkit::tools::run_cli(app, argc, argv, "shardify",
                                  [] { return shardify_cli::exit_code(); });
}
