// A record as one JSON object: {"index": i, "<field>": value-or-nested-list, ...}.
#pragma once

#include <cstdint>
#include <string>

#include "core/schema.h"

namespace shardkit {

std::string field_to_json(const Field& field, const unsigned char* record);
std::string record_to_json(const Schema& schema, const unsigned char* record, uint64_t index);

}  // namespace shardkit
