// Crash safety: a program writing a dataset is killed with SIGKILL at random moments. Afterwards
// the output path holds no dataset or a complete one that verifies and reads back exactly; a
// hidden staging directory left behind never serves a wrong record; and running the program
// again completes and cleans up. The moments are uniform over the program's measured run time
// (plus 10%, so a few land after it finished); the random seed is printed for reproduction.
#include <doctest/doctest.h>

#include <cstdio>
#include <random>

#include "core/staging_marker.h"
#include "core/verify.h"
#include "process_util.h"
#include "reliability_util.h"

namespace shardkit::reliability {
namespace {

// Which complete dataset `out` holds: 0 = none (nothing there), or the seed it was written with.
// Fails the test for anything else.
int dataset_state(const fs::path& out, uint64_t records, std::initializer_list<uint8_t> seeds) {
  if (!fs::exists(fs::symlink_status(out))) return 0;
  const VerifyReport report = verify_dataset(out);
  REQUIRE_MESSAGE(report.ok(),
                  "a dataset at the output path does not verify: " << report.faults[0].message);
  for (uint8_t seed : seeds) {
    const ReadOutcome r = read_and_compare(out, records, seed);
    if (!r.error && !r.wrong_size && r.wrong_records == 0) return seed;
  }
  FAIL("a dataset at the output path verifies but holds neither the old nor the new records");
  return -1;
}

// A staging directory left by a killed process may hold anything, but must never make the
// reader return a wrong record.
// The staging directories beside `out` with what each holds, for a failure's message.
std::string describe_staging(const fs::path& out) {
  std::string text;
  for (const fs::path& dir : staging_dirs(out)) {
    text += dir.filename().string() + ":";
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir, ec))
      text += " " + e.path().filename().string() + " (" +
              std::to_string(fs::file_size(e.path(), ec)) + " bytes)";
    const auto marker = read_staging_marker(dir);
    text += marker ? " marked by pid " + std::to_string(marker->pid) + "\n" : " unmarked\n";
  }
  return text;
}

void check_leftover_staging(const fs::path& out, uint64_t records,
                            std::initializer_list<uint8_t> seeds, uint64_t& leftovers) {
  for (const fs::path& dir : staging_dirs(out)) {
    ++leftovers;
    bool some_seed_clean = false;
    std::string why;
    for (uint8_t seed : seeds) {
      const ReadOutcome r = read_and_compare(dir, records, seed);
      if (r.error || (!r.wrong_size && r.wrong_records == 0))
        some_seed_clean = true;
      else
        why = std::to_string(r.wrong_records) + " wrong record(s)";
    }
    CHECK_MESSAGE(some_seed_clean, dir.string() << " served " << why << " without an error");
  }
}

TEST_CASE("DatasetWriter killed at 20 random moments: no dataset or a complete one") {
  testing::TempDir tmp("crash");
  const fs::path out = tmp / "ds";
  const std::string writer =
      (fs::path(SHARDKIT_BINARY_DIR) / "tests" / "reliability" / "reliability_crash_writer")
          .string();
  REQUIRE(fs::exists(writer));
  const uint64_t records = 80000;
  auto argv = [&](uint8_t seed, bool overwrite) {
    std::vector<std::string> a = {writer, out.string(), std::to_string(records),
                                  std::to_string(seed)};
    if (overwrite) a.push_back("--overwrite");
    return a;
  };

  // The shortest of three runs, so that a stall of the disk does not push most moments past the
  // end of the program.
  RunResult calibration;
  for (int i = 0; i < 3; ++i) {
    const RunResult r = run_program(argv(1, false));
    REQUIRE(r.exited_ok());
    REQUIRE(dataset_state(out, records, {1}) == 1);
    fs::remove_all(out);
    if (i == 0 || r.seconds < calibration.seconds) calibration = r;
  }
  const uint64_t seed = std::random_device{}();
  std::printf("crash test: writer runs %.3f s; random seed %llu\n", calibration.seconds,
              static_cast<unsigned long long>(seed));
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int64_t> moment(0,
                                                static_cast<int64_t>(calibration.seconds * 1.1e6));

  uint64_t landed = 0, absent = 0, complete_new = 0, complete_old = 0, leftovers = 0;
  uint8_t current = 0;  // the seed of the dataset at `out`, 0 for none
  for (int k = 0; k < 20; ++k) {
    // The first half writes a new dataset; the second half replaces the existing one, whose
    // seed alternates between 1 and 2.
    const bool overwrite = k >= 10;
    if (overwrite && current == 0) {
      REQUIRE(run_program(argv(1, false)).exited_ok());
      current = 1;
    }
    const uint8_t next = overwrite ? static_cast<uint8_t>(3 - current) : uint8_t{1};
    const auto delay = std::chrono::microseconds(moment(rng));
    INFO("kill ", k, " after ", delay.count(), " us", overwrite ? " (overwriting)" : "");
    if (kill_after(argv(next, overwrite), delay)) ++landed;

    const int state = dataset_state(out, records, {uint8_t{1}, uint8_t{2}});
    if (state == 0)
      ++absent;
    else if (state == next)
      ++complete_new;
    else
      ++complete_old;
    if (overwrite)
      CHECK((state == next || state == current));  // never nothing, never a third
    else
      CHECK((state == 0 || state == 1));
    check_leftover_staging(out, records, {1, 2}, leftovers);

    // Running again completes, and removes what the killed run left behind.
    const RunResult again = run_program(argv(next, true));
    CHECK(again.exited_ok());
    CHECK(dataset_state(out, records, {next}) == next);
    CHECK_MESSAGE(staging_dirs(out).empty(), describe_staging(out));
    current = next;
    if (!overwrite) {
      fs::remove_all(out);
      current = 0;
    }
  }
  std::printf(
      "crash test: 20 kills, %llu landed while running; afterwards %llu no dataset, "
      "%llu complete new, %llu complete old; %llu staging dirs left (none served a wrong "
      "record); 20 re-runs completed\n",
      static_cast<unsigned long long>(landed), static_cast<unsigned long long>(absent),
      static_cast<unsigned long long>(complete_new), static_cast<unsigned long long>(complete_old),
      static_cast<unsigned long long>(leftovers));
  CHECK(landed >= 5);  // most moments fall inside the run, or the test proves little
}

}  // namespace
}  // namespace shardkit::reliability
