// shardify's subcommands (convert is the app itself; merge, tokenize): one file each, registered
// through tools/command_registry.h.
#pragma once

#include "command_registry.h"

namespace shardify_cli {
using shardkit::tools::command_registry;
using shardkit::tools::exit_code;
using shardkit::tools::RegisterCommand;
}  // namespace shardify_cli
