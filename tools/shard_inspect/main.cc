// shard-inspect: what a dataset holds, whether it is intact, and what a loader will read.
#include <cstdio>

#include "core/error.h"
#include "shard_inspect/commands.h"

int main(int argc, char** argv) {
  CLI::App app{"shard-inspect: show, verify and dump shardkit datasets", "shard-inspect"};
  app.require_subcommand(1);
  for (const auto& setup : shard_inspect::command_registry()) setup(app);
  // Usage errors exit 2, as getopt tools do (CLI11's own codes start at 100).
  if (argc < 2) {
    std::fputs(app.help().c_str(), stderr);
    return 2;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  } catch (const shardkit::Error& e) {
    std::fprintf(stderr, "shard-inspect: %s\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "shard-inspect: %s\n", e.what());
    return 1;
  }
  return shard_inspect::exit_code();
}
