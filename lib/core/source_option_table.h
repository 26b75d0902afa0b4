// How a dataset's bytes are read (SourceOptions), declared once (core/option_table.h): the
// keywords of Python's Dataset and Loader, and the flags of shard-inspect, come from this table.
#pragma once

#include "core/block_source.h"
#include "core/option_table.h"

namespace shardkit {

const options::OptionTable<SourceOptions>& source_option_table();

}  // namespace shardkit
