// The progress reporter of the long commands: what its lines say, and when they are printed on a
// terminal and elsewhere, under each --progress mode. A fake clock drives it; its output goes to
// a memory stream.
#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "core/progress.h"

using shardkit::ProgressMode;
using shardkit::ProgressReporter;
using shardkit::ProgressUnit;

namespace {

// A reporter writing into a string, at the time `now` says.
struct Captured {
  char* data = nullptr;
  size_t size = 0;
  std::FILE* out = open_memstream(&data, &size);
  double now = 0;
  ~Captured() {
    std::fclose(out);  // sets data and size a last time
    std::free(data);
  }
  std::string text() {
    std::fflush(out);
    return std::string(data, size);
  }
  ProgressReporter reporter(ProgressMode mode, bool terminal, ProgressUnit unit) {
    return ProgressReporter("job", std::move(unit), {mode, 30}, out, terminal,
                            [this] { return now; });
  }
};

size_t count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

// Feeds 0..100 seconds, one update a second, 1 MB or 10 items a second of 100 in all.
void run(Captured& c, ProgressReporter& r) {
  for (int t = 0; t <= 100; ++t) {
    c.now = t;
    r.update(uint64_t(t) * 1000000, 100000000);
  }
  r.finish();
}

}  // namespace

TEST_CASE("a line says done of total, the rate and the time left") {
  Captured c;
  auto bytes = c.reporter(ProgressMode::kAuto, false, ProgressUnit::bytes());
  CHECK(bytes.line(120'500'000, 512'000'000, 30, "2,400 records") ==
        "job: 120.5 of 512.0 MB (23.5%), 4.02 MB/s, ETA 1m37s; 2,400 records");
  CHECK(bytes.line(512'000'000, 512'000'000, 130, "", true) ==
        "job: 512.0 of 512.0 MB (100.0%), 3.94 MB/s, took 2m10s");
  auto items = c.reporter(ProgressMode::kAuto, false, ProgressUnit::items("rows"));
  CHECK(items.line(1'234'567, 0, 10, "") == "job: 1,234,567 rows, 123,456 rows/s");  // no total
  CHECK(items.line(50, 100, 7200, "") == "job: 50 of 100 rows (50.0%), 0 rows/s, ETA 2h00m");
  CHECK(shardkit::count_text(0) == "0");
  CHECK(shardkit::count_text(1000) == "1,000");
  CHECK(shardkit::count_text(999) == "999");
}

TEST_CASE("off a terminal: a plain line every interval; always adds the last one") {
  for (ProgressMode mode : {ProgressMode::kAuto, ProgressMode::kAlways}) {
    Captured c;
    auto r = c.reporter(mode, false, ProgressUnit::bytes());
    run(c, r);
    const std::string out = c.text();
    CAPTURE(out);
    CHECK(out.find('\r') == std::string::npos);
    CHECK(out.find("job: 30.0 of 100.0 MB (30.0%), 1.00 MB/s, ETA 1m10s\n") != std::string::npos);
    CHECK(out.find("job: 90.0 of 100.0 MB (90.0%)") != std::string::npos);
    const bool always = mode == ProgressMode::kAlways;
    CHECK(count(out, "\n") == (always ? 4u : 3u));  // at 30, 60, 90 s (and the end)
    CHECK((out.find("job: 100.0 of 100.0 MB (100.0%), 1.00 MB/s, took 1m40s\n") !=
           std::string::npos) == always);
  }
}

TEST_CASE(
    "on a terminal: auto redraws one line twice a second and erases it; always prints lines") {
  Captured c;
  auto r = c.reporter(ProgressMode::kAuto, true, ProgressUnit::bytes());
  run(c, r);
  const std::string out = c.text();
  CHECK(out.find('\n') == std::string::npos);
  CHECK(count(out, "\r") == 102u);  // 100 redraws (one a second here), 2 to erase the line
  CHECK(out.substr(out.size() - 1) == "\r");
  Captured lines;
  auto always = lines.reporter(ProgressMode::kAlways, true, ProgressUnit::bytes());
  run(lines, always);
  CHECK(count(lines.text(), "\n") == 4u);
  CHECK(lines.text().find('\r') == std::string::npos);
}

TEST_CASE("work begun again: the rate and the time left count from the new start") {
  Captured c;
  auto r = c.reporter(ProgressMode::kAlways, false, ProgressUnit::bytes());
  for (int t = 0; t <= 40; ++t) {  // 40 s at 1 MB/s, then the work starts over
    c.now = t;
    r.update(uint64_t(t) * 1000000, 100000000);
  }
  c.now = 41;
  r.start_over(1);                  // the new start was a second ago
  for (int t = 41; t <= 70; ++t) {  // 2 MB/s from the new start
    c.now = t;
    r.update(uint64_t(t - 40) * 2000000, 100000000);
  }
  r.finish();
  const std::string out = c.text();
  CAPTURE(out);
  // At 30 s from the first start; 20 s after the second, at the second's rate alone (over the
  // whole 60 s it would read 0.67 MB/s); the last line times the second run.
  CHECK(out.find("job: 30.0 of 100.0 MB (30.0%), 1.00 MB/s, ETA 1m10s\n") != std::string::npos);
  CHECK(out.find("job: 40.0 of 100.0 MB (40.0%), 2.00 MB/s, ETA 30s\n") != std::string::npos);
  CHECK(out.find("job: 60.0 of 100.0 MB (60.0%), 2.00 MB/s, took 30s\n") != std::string::npos);
}

TEST_CASE("never prints nothing; modes are parsed from their names") {
  Captured c;
  auto r = c.reporter(ProgressMode::kNever, false, ProgressUnit::bytes());
  CHECK_FALSE(r.enabled());
  run(c, r);
  CHECK(c.text().empty());
  CHECK(shardkit::parse_progress_mode("auto") == ProgressMode::kAuto);
  CHECK(shardkit::parse_progress_mode("always") == ProgressMode::kAlways);
  CHECK(shardkit::parse_progress_mode("never") == ProgressMode::kNever);
  CHECK_FALSE(shardkit::parse_progress_mode("yes").has_value());
}
