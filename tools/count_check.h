// The check of a command-line count or index (an epoch, a record index, how many to print):
// CLI11 reads "-1" into an unsigned option as the largest value, so that "--count -1" printed
// everything and "--epoch -1" ran epoch 2^64 - 1.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

namespace shardkit::tools {

inline const CLI::Validator kCount(
    [](std::string& text) -> std::string {
      const bool digits =
          !text.empty() && text.find_first_not_of("0123456789") == std::string::npos;
      return digits ? std::string() : "must be a whole number, 0 or more, not " + text;
    },
    "");

}  // namespace shardkit::tools
