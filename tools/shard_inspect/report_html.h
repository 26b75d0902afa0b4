// The page of `shard-inspect report`: one self-contained HTML file (inline CSS and SVG, no
// script, nothing fetched), readable offline and attachable to an issue or a pull request.
#pragma once

#include <string>

#include "shard_inspect/report_data.h"

namespace shard_inspect {

std::string report_html(const ReportData& data);

}  // namespace shard_inspect
