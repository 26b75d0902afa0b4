// The converter's options, declared once (core/option_table.h): shardify's flags, the keywords
// of Python's write_dataset, their help, defaults, checks and the task-dependent defaults all
// come from this table.
#pragma once

#include "core/option_table.h"
#include "shardify/convert.h"

namespace shardkit::shardify {

const options::OptionTable<ConvertOptions>& convert_option_table();

// The options with every task-dependent default applied (max_len, pack), after the checks
// that need to know what was given: throws Error(kInvalidArgument) for options that do not
// belong to the task or a missing --out or --tokenizer, and Error(kExists) for an existing
// --out without --force.
ConvertOptions resolve(ConvertOptions options);
// The same without the checks of --out and --tokenizer (to show options before they are all
// given, as --print-options does).
ConvertOptions resolve_defaults(ConvertOptions options);

}  // namespace shardkit::shardify
