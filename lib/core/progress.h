// The one progress reporter of the long-running commands (shardify and its merge,
// shard-inspect verify and report, shardkit.write_dataset). On a terminal it redraws one line in
// place; anywhere else (a Slurm log, a redirected file, a pipe) it prints a plain line every
// interval, so a log shows how far a job got without a carriage return per update.
#pragma once

#include <cstdint>
#include <cstdio>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace shardkit {

enum class ProgressMode {
  kAuto,    // a line redrawn in place on a terminal; elsewhere a line every interval
  kAlways,  // a line every interval and one at the end, terminal or not
  kNever,
};

// 1234567 -> "1,234,567": how progress lines and reports write counts.
std::string count_text(uint64_t n);

// "auto", "always" or "never"; nullopt for anything else.
std::optional<ProgressMode> parse_progress_mode(std::string_view text);

// Why `text` is not a time between progress lines, or "" when it is one: a number of seconds
// above 0. The one rule of --progress-interval and write_dataset's progress_interval.
std::string progress_interval_problem(std::string_view text);

struct ProgressOptions {
  ProgressMode mode = ProgressMode::kAuto;
  double interval_seconds = 30;  // between plain lines (a terminal line is redrawn twice a second)
};

// What is counted: bytes are shown in MB, items by their noun ("rows", "blocks").
struct ProgressUnit {
  std::string noun;  // empty: bytes
  static ProgressUnit bytes() { return {}; }
  static ProgressUnit items(std::string noun) { return {std::move(noun)}; }
};

class ProgressReporter {
 public:
  using Clock = std::function<double()>;  // seconds, from any fixed start

  // `what` begins every line ("shardify", "verify"). `terminal` defaults to isatty(out), `clock`
  // to a steady clock.
  ProgressReporter(std::string what, ProgressUnit unit, ProgressOptions options,
                   std::FILE* out = stderr, std::optional<bool> terminal = {}, Clock clock = {});
  ~ProgressReporter();
  ProgressReporter(const ProgressReporter&) = delete;
  ProgressReporter& operator=(const ProgressReporter&) = delete;

  bool enabled() const { return style_ != Style::kNone; }
  // `done` of `total` (0: not known) so far; `note` is appended to the line ("5,120 records").
  void update(uint64_t done, uint64_t total, const std::string& note = {});
  // The same with `done` counted here.
  void add(uint64_t n, uint64_t total, const std::string& note = {});
  // Erases a terminal line; under kAlways prints the last figures. Idempotent.
  void finish();
  // The work began again from nothing `seconds_ago` (a conversion run again): the rate and the
  // time left count from then, not from the first start.
  void start_over(double seconds_ago = 0);

  // "what: 120.5 of 512.0 MB (23.5%), 4.10 MB/s, ETA 1m35s; note" (the last line says
  // "took 2m10s" instead of the ETA).
  std::string line(uint64_t done, uint64_t total, double seconds, const std::string& note,
                   bool last = false) const;

 private:
  enum class Style { kNone, kRedraw, kLines };
  void emit(double now, bool last);

  std::string what_;
  ProgressUnit unit_;
  ProgressOptions options_;
  std::FILE* out_;
  Clock clock_;
  Style style_;
  double start_ = 0, last_emit_ = 0;
  uint64_t done_ = 0, total_ = 0;
  std::string note_;
  size_t shown_width_ = 0;  // of the terminal line on screen, to erase it
  bool finished_ = false;
};

}  // namespace shardkit
