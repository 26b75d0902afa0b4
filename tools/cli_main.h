// What both tools' main() do: --version, parsing, exit codes (usage errors 2, failures 1), and
// a did-you-mean for an unknown flag or subcommand.
#pragma once

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/option_table.h"
#include "core/version.h"

namespace shardkit::tools {

namespace detail {
inline void collect_names(const CLI::App& app, std::vector<std::string>& flags,
                          std::vector<std::string>& commands) {
  for (const CLI::Option* o : app.get_options())
    for (const std::string& n : o->get_lnames()) flags.push_back("--" + n);
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    commands.push_back(sub->get_name());
    collect_names(*sub, flags, commands);
  }
}

// "did you mean --max-len?" for the first unknown argument that resembles a known name.
inline std::string suggestion(const CLI::App& app, const std::vector<std::string>& unknown) {
  std::vector<std::string> flags, commands;
  collect_names(app, flags, commands);
  for (const std::string& arg : unknown) {
    const bool flag = arg.rfind("--", 0) == 0;
    const std::string name = flag ? arg.substr(0, arg.find('=')) : arg;
    const auto close = options::closest_names(name, flag ? flags : commands);
    if (!close.empty()) return "did you mean " + close[0] + " (for " + name + ")?";
  }
  return "";
}

// The arguments that name no flag or subcommand of the app.
inline std::vector<std::string> unknown_arguments(const CLI::App& app, int argc, char** argv) {
  std::vector<std::string> flags, commands, unknown;
  collect_names(app, flags, commands);
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const std::string name = arg.substr(0, arg.find('='));
    const bool flag = name.rfind("--", 0) == 0;
    if (flag && std::find(flags.begin(), flags.end(), name) == flags.end()) unknown.push_back(name);
    if (!flag && i == 1 && app.get_require_subcommand_min() > 0 &&
        std::find(commands.begin(), commands.end(), name) == commands.end())
      unknown.push_back(name);
  }
  return unknown;
}
}  // namespace detail

// Parses and runs; returns the process's exit code.
inline int run_cli(CLI::App& app, int argc, char** argv, const char* tool, int (*exit_code)()) {
  app.set_version_flag("--version", std::string(tool) + " " + kVersion);
  if (argc < 2) {
    std::fputs(app.help().c_str(), stderr);
    return 2;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);
    app.exit(e);
    const std::string hint = detail::suggestion(app, detail::unknown_arguments(app, argc, argv));
    if (!hint.empty()) std::fprintf(stderr, "%s: %s\n", tool, hint.c_str());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", tool, e.what());
    return 1;
  }
  return exit_code();
}

}  // namespace shardkit::tools
