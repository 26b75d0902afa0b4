// DatasetInfo as a JSON value, for the manifest writer and reader (not installed: the public
// interface is DatasetInfo::to_json/from_json).
#pragma once

#include <simdjson.h>

#include <nlohmann/json.hpp>
#include <string>

#include "core/dataset_info.h"

namespace shardkit {

nlohmann::ordered_json to_json_value(const DatasetInfo& info);
nlohmann::ordered_json to_json_value(const ConvertStats& stats);
DatasetInfo dataset_info_from(simdjson::dom::element e, const std::string& where);
ConvertStats convert_stats_from(simdjson::dom::element e, const std::string& where);

}  // namespace shardkit
