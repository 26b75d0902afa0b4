#include <cstdio>

#include "core/json_text.h"
#include "shardify/convert.h"

namespace shardkit::shardify {

std::string ConvertResult::to_json() const {
  char ratio[32], secs[32];
  std::snprintf(ratio, sizeof ratio, "%.4f",
                bytes_out ? double(bytes_in) / double(bytes_out) : 0.0);
  std::snprintf(secs, sizeof secs, "%.3f", seconds);
  std::string o = "{\"out\":" + json_quote(out) + ",\"files\":" + std::to_string(files) +
                  ",\"documents\":" + std::to_string(stats.examples) +
                  ",\"records\":" + std::to_string(stats.records) +
                  ",\"tokens\":" + std::to_string(stats.tokens) +
                  ",\"truncated\":" + std::to_string(stats.truncated) +
                  ",\"skipped\":" + std::to_string(stats.skipped) +
                  ",\"bytes_in\":" + std::to_string(bytes_in) +
                  ",\"bytes_out\":" + std::to_string(bytes_out) + ",\"ratio\":" + ratio +
                  ",\"bytes_per_token\":";
  char bpt[32];
  std::snprintf(bpt, sizeof bpt, "%.4f",
                stats.tokens ? double(bytes_out) / double(stats.tokens) : 0.0);
  o += std::string(bpt) + ",\"seconds\":" + secs + ",\"errors\":[";
  for (size_t i = 0; i < first_errors.size(); ++i)
    o += (i ? "," : "") + json_quote(first_errors[i]);
  return o + "]}";
}

std::string ConvertResult::to_text() const {
  char buf[1024];
  std::snprintf(buf, sizeof buf,
                "shardify: wrote %s\n"
                "  files      %llu\n  documents  %llu\n  records    %llu\n  tokens     %llu\n"
                "  truncated  %llu\n  skipped    %llu\n"
                "  bytes in   %llu\n  bytes out  %llu (input text / output %.2fx,"
                " %.3f bytes/token)\n  time       %.2f s (%.2f MB/s)\n",
                out.c_str(), (unsigned long long)files, (unsigned long long)stats.examples,
                (unsigned long long)stats.records, (unsigned long long)stats.tokens,
                (unsigned long long)stats.truncated, (unsigned long long)stats.skipped,
                (unsigned long long)bytes_in, (unsigned long long)bytes_out,
                bytes_out ? double(bytes_in) / double(bytes_out) : 0.0,
                stats.tokens ? double(bytes_out) / double(stats.tokens) : 0.0, seconds,
                seconds > 0 ? bytes_in / 1e6 / seconds : 0.0);
  std::string o = buf;
  if (!first_errors.empty()) {
    o += "  first errors (skipped):\n";
    for (const auto& e : first_errors) o += "    " + e + "\n";
  }
  return o;
}

}  // namespace shardkit::shardify
