// The converter's last stage: refuse a conversion that wrote nothing, then describe the dataset
// (DatasetInfo) and publish it.
#pragma once

#include "core/dataset_writer.h"
#include "shardify/conversion_encoding.h"
#include "shardify/convert.h"
#include "shardify/convert_inputs.h"

namespace shardkit::shardify {

// Throws Error(kInput) when no record was written (a wrong field or file, almost always),
// unless o.allow_empty.
void check_not_empty(const ConvertOptions& o, const ConvertInputs& in, const ConvertResult& result);
// Records the dataset's info in `writer` and publishes it; sets result.bytes_out.
void publish(const ConvertOptions& o, const ConvertInputs& in, const Encoding& e,
             DatasetWriter& writer, ConvertResult& result);

}  // namespace shardkit::shardify
