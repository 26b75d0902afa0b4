// Crash safety of the real tool: `shardify` converting a generated corpus, and `shardify merge`
// joining four --part datasets, are each killed with SIGKILL at 20 random moments (uniform over
// the measured run time plus 10%). Afterwards the output path holds nothing or a dataset that
// verifies and whose every record equals an uninterrupted run's; a staging directory left behind
// never serves a wrong record; re-running the same command completes and leaves no staging
// directory; merge never disturbs its parts. The random seed is printed for reproduction.
#include <doctest/doctest.h>

#include <cstdio>
#include <random>

#include "core/verify.h"
#include "process_util.h"
#include "shardify_fixture.h"

namespace shardkit::reliability {
namespace {

struct KillFigures {
  uint64_t landed = 0, absent = 0, complete = 0, leftovers = 0, reruns = 0;
};

// Kills `argv` 20 times at random moments and checks what is left at `out` against
// `reference`; `rerun_argv` is the same command allowed to replace an existing output.
KillFigures kill_loop(const std::vector<std::string>& argv,
                      const std::vector<std::string>& rerun_argv, const fs::path& out,
                      const fs::path& reference, double seconds, const char* what) {
  KillFigures k;
  const uint64_t seed = std::random_device{}();
  std::printf("%s: runs %.3f s; random seed %llu\n", what, seconds,
              static_cast<unsigned long long>(seed));
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int64_t> moment(0, static_cast<int64_t>(seconds * 1.1e6));
  for (int i = 0; i < 20; ++i) {
    const auto delay = std::chrono::microseconds(moment(rng));
    INFO(what, ": kill ", i, " after ", delay.count(), " us");
    if (kill_after(argv, delay)) ++k.landed;
    if (fs::exists(fs::symlink_status(out))) {
      ++k.complete;
      const VerifyReport report = verify_dataset(out);
      CHECK_MESSAGE(report.ok(), report.faults[0].message);
      const std::string diff = compare_datasets(out, reference);
      CHECK_MESSAGE(diff.empty(), "output after the kill: " << diff);
    } else {
      ++k.absent;
    }
    for (const fs::path& dir : staging_dirs(out)) {
      ++k.leftovers;
      // Whatever it holds, reading it must not hand out wrong records without an error.
      const std::string diff = compare_datasets(dir, reference);
      const bool silently_wrong = diff.rfind("record ", 0) == 0 ||
                                  diff.find(" vs ") != std::string::npos ||
                                  diff == "schemas differ";
      CHECK_MESSAGE(!silently_wrong, dir.string() << ": " << diff);
    }
    const RunResult again = run_program(fs::exists(out) ? rerun_argv : argv);
    ++k.reruns;
    CHECK(again.exited_ok());
    CHECK(compare_datasets(out, reference).empty());
    CHECK(verify_dataset(out).ok());
    CHECK(staging_dirs(out).empty());
    fs::remove_all(out);
  }
  std::printf(
      "%s: 20 kills, %llu landed while running; afterwards %llu no dataset, %llu "
      "complete and identical; %llu staging dirs left (none served a wrong record); "
      "%llu re-runs completed\n",
      what, static_cast<unsigned long long>(k.landed), static_cast<unsigned long long>(k.absent),
      static_cast<unsigned long long>(k.complete), static_cast<unsigned long long>(k.leftovers),
      static_cast<unsigned long long>(k.reruns));
  CHECK(k.landed >= 5);  // most moments fall inside the run, or the test proves little
  return k;
}

struct Corpus {
  testing::TempDir tmp{"shardify-crash"};
  fs::path vocab = write_vocab(tmp.path());
  fs::path in = tmp / "in";
  Corpus() {
    fs::create_directories(in);
    for (int f = 0; f < 4; ++f)
      testing::write_file(in / ("part" + std::to_string(f) + ".txt"), corpus_lines(6000, f));
  }
  std::vector<std::string> convert(const fs::path& out, const std::string& part = {}) const {
    std::vector<std::string> a = {
        shardify_path(), "--input", in.string(),    "--task",       "lm",        "--doc-sep=line",
        "--max-len",     "64",      "--tokenizer",  vocab.string(), "--threads", "2",
        "--block-size",  "8192",    "--shard-size", "32768",        "--out",     out.string()};
    if (!part.empty()) a.insert(a.end(), {"--part", part});
    return a;
  }
};

std::vector<std::string> with_force(std::vector<std::string> a) {
  a.push_back("--force");
  return a;
}

TEST_CASE("shardify killed at 20 random moments: no dataset or the complete one") {
  Corpus c;
  const fs::path reference = c.tmp / "reference";
  const RunResult ref = run_program(c.convert(reference));
  REQUIRE(ref.exited_ok());
  REQUIRE(verify_dataset(reference).ok());
  REQUIRE(Dataset::open(reference).manifest().shards.size() >= 4);
  const fs::path out = c.tmp / "ds";
  kill_loop(c.convert(out), with_force(c.convert(out)), out, reference, ref.seconds, "shardify");
}

TEST_CASE("shardify merge killed at 20 random moments: no dataset or the complete one") {
  Corpus c;
  const fs::path reference = c.tmp / "reference";
  REQUIRE(run_program(c.convert(reference)).exited_ok());
  std::vector<std::string> merge = {shardify_path(), "merge", (c.tmp / "merged").string()};
  for (int p = 0; p < 4; ++p) {
    const fs::path part = c.tmp / ("p" + std::to_string(p));
    REQUIRE(run_program(c.convert(part, std::to_string(p) + "/4")).exited_ok());
    merge.push_back(part.string());
  }
  // The uninterrupted merge equals the single run, record for record.
  const RunResult ref = run_program(merge);
  REQUIRE(ref.exited_ok());
  REQUIRE(compare_datasets(c.tmp / "merged", reference).empty());
  fs::remove_all(c.tmp / "merged");
  kill_loop(merge, with_force(merge), c.tmp / "merged", reference, ref.seconds, "shardify merge");
  for (int p = 0; p < 4; ++p)
    CHECK(verify_dataset(c.tmp / ("p" + std::to_string(p))).ok());  // parts untouched
}

}  // namespace
}  // namespace shardkit::reliability
