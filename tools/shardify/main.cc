// shardify: tokenize raw corpora once into shardkit datasets.
#include <cstdio>

#include "core/error.h"
#include "core/staged_directory.h"
#include "shardify/commands.h"

int main(int argc, char** argv) {
  // Ctrl-C and SIGTERM remove the dataset being built (before any thread starts).
  shardkit::remove_staging_on_signals();
  CLI::App app{"shardify: tokenize corpora into compressed, checksummed shard datasets",
               "shardify"};
  for (const auto& setup : shardify_cli::command_registry()) setup(app);
  // Usage errors exit 2, as getopt tools do (CLI11's own codes start at 100).
  if (argc < 2) {
    std::fputs(app.help().c_str(), stderr);
    return 2;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "shardify: %s\n", e.what());
    return 1;
  }
  return shardify_cli::exit_code();
}
