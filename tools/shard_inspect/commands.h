// shard-inspect's subcommands: one file each, registered through tools/command_registry.h.
#pragma once

#include "command_registry.h"

namespace shard_inspect {
using shardkit::tools::command_registry;
using shardkit::tools::exit_code;
using shardkit::tools::RegisterCommand;
}  // namespace shard_inspect
