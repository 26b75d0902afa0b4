// The check of a command-line count or index (an epoch, a record index, how many to print):
// CLI11 reads "-1" into an unsigned option as the largest value, so that "--count -1" printed
// everything and "--epoch -1" ran epoch 2^64 - 1.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

namespace shardkit::tools {

inline bool whole_number(const std::string& text) {
  return !text.empty() && text.find_first_not_of("0123456789") == std::string::npos;
}

inline const CLI::Validator kCount(
    [](std::string& text) -> std::string {
      return whole_number(text) ? std::string() : "must be a whole number, 0 or more, not " + text;
    },
    "");

// A count that must be at least 1 (histogram bins: 0 drew one bin).
inline const CLI::Validator kPositiveCount(
    [](std::string& text) -> std::string {
      return whole_number(text) && text.find_first_not_of('0') != std::string::npos
                 ? std::string()
                 : "must be a whole number, 1 or more, not " + text;
    },
    "");

}  // namespace shardkit::tools
