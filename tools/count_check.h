// The check of a command-line count or index (an epoch, a record index, how many to print):
// CLI11 reads "-1" into an unsigned option as the largest value, so that "--count -1" printed
// everything and "--epoch -1" ran epoch 2^64 - 1; it also reads a number past 2^64 - 1 as
// 2^64 - 1, so that "--epoch 99999999999999999999" printed the order of epoch 2^64 - 1.
#pragma once

#include <CLI/CLI.hpp>
#include <charconv>
#include <cstdint>
#include <string>

namespace shardkit::tools {

inline bool whole_number(const std::string& text) {
  return !text.empty() && text.find_first_not_of("0123456789") == std::string::npos;
}

// A whole number a 64-bit count holds.
inline bool fits_in_64_bits(const std::string& digits) {
  uint64_t value = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  return ec == std::errc() && end == digits.data() + digits.size();
}

// "" for a count of 64 bits that is at least `least`; otherwise why not.
inline std::string count_problem(const std::string& text, char least) {
  const bool whole =
      whole_number(text) && (least == '0' || text.find_first_not_of('0') != std::string::npos);
  if (!whole) return std::string("must be a whole number, ") + least + " or more, not " + text;
  if (!fits_in_64_bits(text)) return "must be at most 18446744073709551615, not " + text;
  return "";
}

inline const CLI::Validator kCount([](std::string& text) { return count_problem(text, '0'); }, "");

// A count that must be at least 1 (histogram bins: 0 drew one bin).
inline const CLI::Validator kPositiveCount(
    [](std::string& text) { return count_problem(text, '1'); }, "");

}  // namespace shardkit::tools
