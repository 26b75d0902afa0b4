#include <cstdio>
#include <string>

#include <nlohmann/json.hpp>

#include "core/dataset_info_json.h"
#include "core/json_text.h"
#include "core/utf8.h"
#include "shardify/convert.h"

namespace shardkit::shardify {

// The counts under the manifest's keys (one serializer: core/dataset_info_json.h), then what
// only a run knows.
std::string ConvertResult::to_json() const {
  nlohmann::ordered_json j;
  j["out"] = out;
  j["files"] = files;
  j.update(to_json_value(stats));
  j["dropped"] = stats.dropped;
  j["loss_tokens"] = stats.loss_tokens;
  // The name this count had before the summary took the manifest's keys; deprecated.
  j["documents"] = stats.examples;
  j["bytes_in"] = bytes_in;
  j["bytes_in_compressed"] = bytes_in_compressed;
  j["bytes_out"] = bytes_out;
  j["ratio"] = bytes_out ? double(bytes_in) / double(bytes_out) : 0.0;
  j["bytes_per_token"] = stats.tokens ? double(bytes_out) / double(stats.tokens) : 0.0;
  j["seconds"] = seconds;
  j["errors"] = first_errors;
  j["read_again_checked"] = read_again_checked;
  j["notes"] = notes;
  return json_text(j);
}

// One item per line: a file's name may hold a newline or another control byte, which would
// start a line of its own (the --json summary escapes them as JSON does).
std::string ConvertResult::to_text() const {
  // Compressed inputs: the text bytes, and beside them what the files take on disk.
  const std::string compressed =
      bytes_in_compressed != bytes_in
          ? " (" + std::to_string(bytes_in_compressed) + " compressed on disk)"
          : std::string();
  char buf[1024];
  std::snprintf(buf, sizeof buf,
                "  files      %llu\n  examples   %llu\n  records    %llu\n  tokens     %llu\n"
                "  truncated  %llu\n  skipped    %llu\n"
                "  bytes in   %llu%s\n  bytes out  %llu (input text / output %.2fx, %.3f "
                "bytes/token)\n  time      "
                " %.2f s (%.2f MB/s)\n",
                (unsigned long long)files, (unsigned long long)stats.examples,
                (unsigned long long)stats.records, (unsigned long long)stats.tokens,
                (unsigned long long)stats.truncated, (unsigned long long)stats.skipped,
                (unsigned long long)bytes_in, compressed.c_str(), (unsigned long long)bytes_out,
                bytes_out ? double(bytes_in) / double(bytes_out) : 0.0,
                stats.tokens ? double(bytes_out) / double(stats.tokens) : 0.0, seconds,
                seconds > 0 ? bytes_in / 1e6 / seconds : 0.0);
  // The name outside the fixed-size buffer: a long one, escaped, is not cut short.
  std::string o = "shardify: wrote " + escape_for_one_line(out) + "\n" + buf;
  if (stats.dropped)
    o += "  dropped    " + std::to_string(stats.dropped) + " (longer than --max-len)\n";
  if (stats.loss_tokens) o += "  loss on    " + std::to_string(stats.loss_tokens) + " tokens\n";
  if (read_again_checked)
    o += "  read twice (a compressed file was damaged inside a member or frame: the inputs were "
         "read again, each checked before use)\n";
  for (const auto& note : notes) o += "  note: " + escape_for_one_line(note) + "\n";
  if (!first_errors.empty()) {
    o += "  first errors (skipped):\n";
    for (const auto& e : first_errors) o += "    " + escape_for_one_line(e) + "\n";
  }
  return o;
}

}  // namespace shardkit::shardify
