// A record as one JSON object: {"index": i, "<field>": value-or-nested-list, ...}.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>

#include "core/schema.h"

namespace shardkit {

nlohmann::ordered_json field_json(const Field& field, const unsigned char* record);
nlohmann::ordered_json record_json(const Schema& schema, const unsigned char* record,
                                   uint64_t index);

}  // namespace shardkit
