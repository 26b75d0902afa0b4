// The loader's options, declared once (core/option_table.h): the keywords of Python's Loader
// and IterableDataset (and their docstrings and stubs) and shard-inspect order's flags (the
// options that change the order) come from this table.
#pragma once

#include "core/option_table.h"
#include "loader/loader_options.h"

namespace shardkit::loader {

const options::OptionTable<LoaderOptions>& loader_option_table();

}  // namespace shardkit::loader
