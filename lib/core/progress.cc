#include "core/progress.h"

#include <unistd.h>

#include <chrono>
#include <cmath>

namespace shardkit {
namespace {

constexpr double kRedrawSeconds = 0.5;

double steady_seconds() {
  using namespace std::chrono;
  return duration<double>(steady_clock::now().time_since_epoch()).count();
}

// "45s", "3m05s", "2h03m".
std::string duration_text(double seconds) {
  const auto s = static_cast<uint64_t>(std::llround(std::max(0.0, seconds)));
  char buf[32];
  if (s < 60)
    std::snprintf(buf, sizeof buf, "%llus", static_cast<unsigned long long>(s));
  else if (s < 3600)
    std::snprintf(buf, sizeof buf, "%llum%02llus", static_cast<unsigned long long>(s / 60),
                  static_cast<unsigned long long>(s % 60));
  else
    std::snprintf(buf, sizeof buf, "%lluh%02llum", static_cast<unsigned long long>(s / 3600),
                  static_cast<unsigned long long>(s / 60 % 60));
  return buf;
}

std::string printf_text(const char* format, double value) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, value);
  return buf;
}

}  // namespace

std::string count_text(uint64_t n) {
  std::string digits = std::to_string(n), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

std::string progress_interval_problem(std::string_view text) {
  const std::string copy(text);  // strtod needs the terminating NUL
  char* end = nullptr;
  const double seconds = std::strtod(copy.c_str(), &end);
  const bool ok = end != copy.c_str() && *end == '\0' && std::isfinite(seconds) && seconds > 0;
  return ok ? std::string() : "must be a number of seconds above 0, not " + copy;
}

std::optional<ProgressMode> parse_progress_mode(std::string_view text) {
  if (text == "auto") return ProgressMode::kAuto;
  if (text == "always") return ProgressMode::kAlways;
  if (text == "never") return ProgressMode::kNever;
  return std::nullopt;
}

ProgressReporter::ProgressReporter(std::string what, ProgressUnit unit, ProgressOptions options,
                                   std::FILE* out, std::optional<bool> terminal, Clock clock)
    : what_(std::move(what)),
      unit_(std::move(unit)),
      options_(options),
      out_(out),
      clock_(clock ? std::move(clock) : Clock(steady_seconds)) {
  const bool tty = terminal.value_or(::isatty(::fileno(out_)) == 1);
  if (options_.mode == ProgressMode::kNever)
    style_ = Style::kNone;
  else if (options_.mode == ProgressMode::kAuto && tty)
    style_ = Style::kRedraw;
  else
    style_ = Style::kLines;
  start_ = last_emit_ = clock_();
}

ProgressReporter::~ProgressReporter() { finish(); }

void ProgressReporter::start_over(double seconds_ago) {
  start_ = clock_() - seconds_ago;
  done_ = 0;
}

std::string ProgressReporter::line(uint64_t done, uint64_t total, double seconds,
                                   const std::string& note, bool last) const {
  const bool bytes = unit_.noun.empty();
  const auto amount = [&](uint64_t n) {
    return bytes ? printf_text("%.1f", n / 1e6) : count_text(n);
  };
  const std::string unit = bytes ? "MB" : unit_.noun;
  std::string s = what_ + ": " + amount(done);
  if (total) s += " of " + amount(total);
  s += " " + unit;
  if (total) s += printf_text(" (%.1f%%)", 100.0 * static_cast<double>(done) / total);
  if (seconds > 0) {
    const double rate = static_cast<double>(done) / seconds;
    s += bytes ? printf_text(", %.2f MB/s", rate / 1e6)
               : ", " + count_text(static_cast<uint64_t>(rate)) + " " + unit + "/s";
    if (last)
      s += ", took " + duration_text(seconds);
    else if (total > done && rate > 0)
      s += ", ETA " + duration_text((total - done) / rate);
  }
  if (!note.empty()) s += "; " + note;
  return s;
}

void ProgressReporter::update(uint64_t done, uint64_t total, const std::string& note) {
  if (style_ == Style::kNone || finished_) return;
  done_ = done;
  total_ = total;
  note_ = note;
  const double now = clock_();
  const double wait = style_ == Style::kRedraw ? kRedrawSeconds : options_.interval_seconds;
  if (now - last_emit_ >= wait) emit(now, false);
}

void ProgressReporter::add(uint64_t n, uint64_t total, const std::string& note) {
  update(done_ + n, total, note);
}

void ProgressReporter::emit(double now, bool last) {
  last_emit_ = now;
  std::string text = line(done_, total_, now - start_, note_, last);
  if (style_ == Style::kRedraw) {
    const size_t width = text.size();
    if (width < shown_width_) text.append(shown_width_ - width, ' ');
    std::fprintf(out_, "\r%s", text.c_str());
    shown_width_ = width;
  } else {
    std::fprintf(out_, "%s\n", text.c_str());
  }
  std::fflush(out_);
}

void ProgressReporter::finish() {
  if (finished_) return;
  finished_ = true;
  if (style_ == Style::kRedraw && shown_width_) {
    // Erased, so that the summary starts on a clean line.
    std::fprintf(out_, "\r%s\r", std::string(shown_width_, ' ').c_str());
    std::fflush(out_);
  } else if (style_ == Style::kLines && options_.mode == ProgressMode::kAlways) {
    emit(clock_(), true);
  }
}

}  // namespace shardkit
