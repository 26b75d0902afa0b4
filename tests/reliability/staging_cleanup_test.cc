// Staging directories (issue 28, item 17; format/SPEC.md "Writing a dataset safely"). shardify
// interrupted by SIGINT, SIGTERM, SIGHUP or SIGPIPE removes the one it was building and ends by
// that signal; a new writer removes the staging directories beside its target that writers which
// are gone left (any target's, recognised by their marker), and nothing else: not a folder that
// only has the name, not a live writer's, not another host's, never through a link. Before, an
// interrupted conversion left a 17 MB hidden folder until the next writer of the same name, and
// that writer removed whatever had the name and a dead pid.
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <set>
#include <sstream>
#include <thread>

#include "process_util.h"
#include "shardify_fixture.h"

namespace shardkit::reliability {
namespace {

using Clock = std::chrono::steady_clock;

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

// Field 22 of /proc/PID/stat, read here independently of the library.
std::string start_time(pid_t pid) {
  const std::string stat = testing::read_file("/proc/" + std::to_string(pid) + "/stat");
  std::istringstream fields(stat.substr(stat.rfind(')') + 1));
  std::string field;
  for (int i = 3; i <= 22; ++i) fields >> field;
  return field;
}

std::string boot_id() { return trim(testing::read_file("/proc/sys/kernel/random/boot_id")); }

std::string host_name() {
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  return host;
}

// The PID namespace of `pid`, read here independently of the library.
std::string pid_ns(pid_t pid) {
  return fs::read_symlink("/proc/" + std::to_string(pid) + "/ns/pid").string();
}

// The marker as format/SPEC.md writes it; without `ns`, as versions before its pidns line did.
std::string marker(long pid, const std::string& boot, const std::string& start,
                   const std::string& host, const std::string& ns = "") {
  return "shardkit staging directory\npid " + std::to_string(pid) + "\nboot " + boot + "\nstart " +
         start + "\nhost " + host + "\n" + (ns.empty() ? "" : "pidns " + ns + "\n");
}

// A pid that belonged to a process which has ended.
pid_t dead_pid() {
  const pid_t pid = ::fork();
  if (pid == 0) ::_exit(0);
  wait_for(pid);
  return pid;
}

fs::path staging_with(const fs::path& parent, const std::string& name,
                      const std::string& marker_text,
                      const std::string& file = "shard-00000.shard") {
  const fs::path dir = parent / name;
  fs::create_directories(dir);
  if (!marker_text.empty()) testing::write_file(dir / ".shardkit-staging", marker_text);
  if (!file.empty()) testing::write_file(dir / file, "bytes of " + name);
  return dir;
}

// Starts a conversion of `input` into `out` long enough to be caught running (`launcher`, such
// as a shell or unshare, goes before shardify), and returns its pid once its staging directory
// holds a shard (and so its marker, written first); `staging` gets that directory.
pid_t start_long_conversion(const std::vector<std::string>& launcher, const fs::path& vocab,
                            const fs::path& input, const fs::path& out, const fs::path& log,
                            fs::path* staging) {
  std::vector<std::string> argv = launcher;
  for (const std::string& a :
       {shardify_path(), std::string("--task"), std::string("lm"), std::string("--doc-sep"),
        std::string("line"), std::string("--threads"), std::string("1"),
        std::string("--zstd-level"), std::string("19"), std::string("--shard-size"),
        std::string("65536"), std::string("--tokenizer"), vocab.string(), std::string("--input"),
        input.string(), std::string("--out"), out.string()})
    argv.push_back(a);
  const pid_t pid = spawn(argv, log.string());
  const auto start = Clock::now();
  while (std::chrono::duration<double>(Clock::now() - start).count() < 60) {
    const std::vector<fs::path> found = staging_dirs(out);
    if (found.size() == 1 && fs::exists(found[0] / "shard-00000.shard")) {
      *staging = found[0];
      return pid;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ::kill(pid, SIGKILL);
  wait_for(pid);
  FAIL("no staging directory with a shard appeared for " << out);
  return -1;
}

fs::path long_corpus(const fs::path& dir) {
  const fs::path input = dir / "corpus.txt";
  std::string corpus;
  for (int part = 0; part < 8; ++part) corpus += corpus_lines(40000, part);
  testing::write_file(input, corpus);
  return input;
}

}  // namespace

TEST_CASE("SIGINT, SIGTERM and SIGHUP remove the staging directory of a running conversion") {
  testing::TempDir tmp("staging-signal");
  const fs::path vocab = write_vocab(tmp.path());
  const fs::path input = tmp / "corpus.txt";
  std::string corpus;
  for (int part = 0; part < 8; ++part) corpus += corpus_lines(40000, part);
  testing::write_file(input, corpus);
  // SIGHUP: the terminal or ssh connection of the conversion went away.
  for (const int sig : {SIGINT, SIGTERM, SIGHUP}) {
    INFO("signal ", sig);
    // Inside parents that do not exist yet: the conversion makes them, and removes them too.
    const fs::path made = tmp / ("new-" + std::to_string(sig));
    const fs::path out = made / "a" / "out";
    const pid_t pid = spawn({shardify_path(), "--task", "lm", "--doc-sep", "line", "--threads", "1",
                             "--zstd-level", "19", "--shard-size", "65536", "--tokenizer",
                             vocab.string(), "--input", input.string(), "--out", out.string()},
                            (tmp / "log").string());
    // Until the staging directory holds a shard (and so the marker, written first).
    std::vector<fs::path> staging;
    const auto start = Clock::now();
    while (std::chrono::duration<double>(Clock::now() - start).count() < 60) {
      staging = fs::exists(out.parent_path()) ? staging_dirs(out) : std::vector<fs::path>{};
      if (!staging.empty() && fs::exists(staging[0] / "shard-00000.shard")) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    REQUIRE(staging.size() == 1);
    REQUIRE_MESSAGE(fs::exists(staging[0] / "shard-00000.shard"), staging[0]);
    // The marker names this writer as the SPEC says.
    CHECK(testing::read_file(staging[0] / ".shardkit-staging") ==
          marker(pid, boot_id(), start_time(pid), host_name(), pid_ns(pid)));
    const auto sent = Clock::now();
    ::kill(pid, sig);
    const int status = wait_for(pid);
    const double took = std::chrono::duration<double>(Clock::now() - sent).count();
    CHECK(WIFSIGNALED(status));
    CHECK(WTERMSIG(status) == sig);
    CHECK(took < 1.0);
    CHECK_FALSE(fs::exists(out));
    CHECK_FALSE(fs::exists(made));  // with the staging directory that was inside it
    MESSAGE("signal ", sig, ": ended in ", took, " s, staging directory removed");
  }
}

TEST_CASE("a failed conversion removes the parents it made, and no directory it did not make") {
  testing::TempDir tmp("staging-parents");
  const fs::path vocab = write_vocab(tmp.path());
  testing::write_file(tmp / "bad.jsonl", "{\"text\": \"fine\"}\n{broken\n");
  testing::write_file(tmp / "good.jsonl", "{\"text\": \"fine\"}\n");
  const auto convert = [&](const fs::path& input, const fs::path& out) {
    return run_shardify("--task lm --max-len 16 --tokenizer " + shell_quote(vocab.string()) +
                        " --input " + shell_quote(input.string()) + " --out " +
                        shell_quote(out.string()));
  };
  CHECK(convert(tmp / "bad.jsonl", tmp / "x" / "y" / "ds") == 1);
  CHECK_FALSE(fs::exists(tmp / "x"));
  // A parent that existed stays, with what it holds; only the level made here goes.
  fs::create_directories(tmp / "kept");
  testing::write_file(tmp / "kept" / "notes.txt", "a user's file\n");
  CHECK(convert(tmp / "bad.jsonl", tmp / "kept" / "new" / "ds") == 1);
  CHECK_FALSE(fs::exists(tmp / "kept" / "new"));
  CHECK(testing::read_file(tmp / "kept" / "notes.txt") == "a user's file\n");
  // A published dataset keeps the parents made for it.
  CHECK(convert(tmp / "good.jsonl", tmp / "p" / "q" / "ds") == 0);
  CHECK(fs::is_regular_file(tmp / "p" / "q" / "ds" / "manifest.json"));
}

TEST_CASE("a parent that cannot be created is reported with mkdir's own error") {
  testing::TempDir tmp("staging-parent-errno");
  const fs::path vocab = write_vocab(tmp.path());
  testing::write_file(tmp / "good.jsonl", "{\"text\": \"fine\"}\n");
  // sysfs refuses new directories (EPERM for root, EACCES for others), and a stat of the path
  // then says ENOENT, which the message gave before. The errno comes from mkdir(2) here.
  const fs::path parent = "/sys/shardkit-test-" + std::to_string(::getpid());
  if (::mkdir(parent.c_str(), 0755) == 0) {
    ::rmdir(parent.c_str());
    MESSAGE("skipped: " << parent << " could be created");
    return;
  }
  const int err = errno;
  REQUIRE(err != ENOENT);
  std::string out;
  CHECK(run_shardify("--task lm --max-len 16 --tokenizer " + shell_quote(vocab.string()) +
                         " --input " + shell_quote((tmp / "good.jsonl").string()) + " --out " +
                         shell_quote((parent / "sub" / "ds").string()),
                     &out) == 1);
  CHECK_MESSAGE(out.find("cannot create the output's parent directory: " +
                         std::string(std::strerror(err))) != std::string::npos,
                out);
}

TEST_CASE("a new parent removed by another writer's failure is made again") {
  // Two conversions into the same new parent: one makes it, the other finds it, and the first
  // fails and removes it (empty) just before the second makes its staging directory inside.
  // The preload removes it at that moment, in one process.
  testing::TempDir tmp("staging-vanishing-parent");
  const fs::path vocab = write_vocab(tmp.path());
  testing::write_file(tmp / "good.jsonl", "{\"text\": \"fine\"}\n");
  const fs::path out = tmp / "shared" / "new" / "ds";
  std::string log;
  const int rc = testing::run_command(
      "ASAN_OPTIONS=verify_asan_link_order=0 LD_PRELOAD=" + shell_quote(VANISHING_PARENT_PRELOAD) +
          " " + shardify_path() + " --task lm --max-len 16 --tokenizer " +
          shell_quote(vocab.string()) + " --input " + shell_quote((tmp / "good.jsonl").string()) +
          " --out " + shell_quote(out.string()),
      &log);
  INFO(log);
  REQUIRE(log.find("vanishing_parent: removed " + out.parent_path().string()) != std::string::npos);
  CHECK(rc == 0);
  CHECK(fs::is_regular_file(out / "manifest.json"));
  CHECK(staging_dirs(out).empty());
}

TEST_CASE("a writer removes the staging directories of gone writers beside it, nothing else") {
  testing::TempDir tmp("staging-stale");
  const fs::path vocab = write_vocab(tmp.path());
  const fs::path input = tmp / "corpus.txt";
  testing::write_file(input, corpus_lines(100, 1));
  const fs::path parent = tmp / "parent";
  fs::create_directories(parent);
  const pid_t dead = dead_pid(), me = ::getpid();
  const std::string boot = boot_id(), host = host_name(), mine = start_time(me);

  // Removed: another target's, a gone writer's; this pid with another start time (reused);
  // another boot; an empty one of a gone pid (killed before its marker).
  const fs::path other = staging_with(parent, ".other.partial-" + std::to_string(dead) + "-1",
                                      marker(dead, boot, "1", host));
  const fs::path reused = staging_with(parent, ".out.partial-" + std::to_string(me) + "-4",
                                       marker(me, boot, "1", host));
  const fs::path rebooted =
      staging_with(parent, ".u.partial-" + std::to_string(dead) + "-10",
                   marker(dead, "00000000-0000-0000-0000-000000000000", "1", host));
  const fs::path empty = staging_with(parent, ".z.partial-" + std::to_string(dead) + "-7", "", "");
  // A gone pid's with a marker cut short (killed between creating and filling it): empty, or
  // the start of its first line, and nothing else.
  const fs::path cut_empty =
      staging_with(parent, ".z.partial-" + std::to_string(dead) + "-13", "", "");
  testing::write_file(cut_empty / ".shardkit-staging", "");
  const fs::path cut_text =
      staging_with(parent, ".z.partial-" + std::to_string(dead) + "-14", "shardkit stag", "");
  // The same with the namespace line: a gone pid of this namespace, another boot in another.
  const std::string ns = pid_ns(me), other_ns = "pid:[1]";
  REQUIRE(ns != other_ns);
  const fs::path gone_here = staging_with(parent, ".n.partial-" + std::to_string(dead) + "-17",
                                          marker(dead, boot, "1", host, ns));
  const fs::path gone_there =
      staging_with(parent, ".n.partial-1-18",
                   marker(1, "00000000-0000-0000-0000-000000000000", "1", host, other_ns));
  // Kept: no marker (a user's folder with the name), a live writer (this test), another host's,
  // a marker naming another pid, a marker that is a link, a link to a staging directory, a
  // file with the name, a name that is not hidden.
  const fs::path unmarked =
      staging_with(parent, ".out.partial-" + std::to_string(dead) + "-2", "", "notes.txt");
  const fs::path live = staging_with(parent, ".out.partial-" + std::to_string(me) + "-3",
                                     marker(me, boot, mine, host));
  const fs::path foreign = staging_with(parent, ".x.partial-" + std::to_string(dead) + "-5",
                                        marker(dead, boot, "1", "another-host"));
  const fs::path mismatched = staging_with(parent, ".w.partial-" + std::to_string(dead) + "-8",
                                           marker(dead + 1000000, boot, "1", host));
  const fs::path linked_marker =
      staging_with(parent, ".v.partial-" + std::to_string(dead) + "-9", "");
  const fs::path target = staging_with(tmp.path(), "elsewhere", marker(dead, boot, "1", host));
  fs::create_symlink(target / ".shardkit-staging", linked_marker / ".shardkit-staging");
  const fs::path link = parent / (".y.partial-" + std::to_string(dead) + "-6");
  fs::create_directory_symlink(target, link);
  const fs::path file = parent / (".t.partial-" + std::to_string(dead) + "-11");
  testing::write_file(file, "a user's file");
  const fs::path visible = staging_with(parent, "user.partial-" + std::to_string(dead) + "-12",
                                        marker(dead, boot, "1", host));
  // A cut marker beside other files, or a file in the marker's place that is not a marker's
  // beginning.
  const fs::path cut_beside =
      staging_with(parent, ".z.partial-" + std::to_string(dead) + "-15", "shardkit stag");
  const fs::path not_marker =
      staging_with(parent, ".z.partial-" + std::to_string(dead) + "-16", "my notes", "");
  // A writer in another PID namespace (a container sharing the volume and the host name): its
  // pid, 1 there, or a pid gone here, says nothing about it.
  const fs::path container =
      staging_with(parent, ".n.partial-1-19", marker(1, boot, "1", host, other_ns));
  const fs::path container_gone_pid =
      staging_with(parent, ".n.partial-" + std::to_string(dead) + "-20",
                   marker(dead, boot, "1", host, other_ns));

  std::string out;
  REQUIRE_MESSAGE(
      run_shardify("--task lm --doc-sep line --tokenizer " + shell_quote(vocab.string()) +
                       " --input " + shell_quote(input.string()) + " --out " +
                       shell_quote((parent / "out").string()),
                   &out) == 0,
      out);
  for (const fs::path& gone :
       {other, reused, rebooted, empty, cut_empty, cut_text, gone_here, gone_there})
    CHECK_MESSAGE(!fs::exists(gone), gone);
  for (const fs::path& kept :
       {unmarked, live, foreign, mismatched, linked_marker, container, container_gone_pid})
    CHECK_MESSAGE(fs::exists(kept / (kept == unmarked ? "notes.txt" : "shard-00000.shard")), kept);
  CHECK(fs::is_symlink(link));
  CHECK(fs::exists(target / "shard-00000.shard"));
  CHECK(fs::exists(target / ".shardkit-staging"));
  CHECK(testing::read_file(file) == "a user's file");
  CHECK(fs::exists(visible / "shard-00000.shard"));
  CHECK(fs::exists(cut_beside / "shard-00000.shard"));
  CHECK(testing::read_file(not_marker / ".shardkit-staging") == "my notes");
  // The published dataset does not carry the marker, and no staging directory of its own is left.
  CHECK(fs::exists(parent / "out" / "manifest.json"));
  CHECK_FALSE(fs::exists(parent / "out" / ".shardkit-staging"));
  CHECK(staging_dirs(parent / "out").size() == 2);  // the unmarked one and the live one
}

TEST_CASE("a live writer in another PID namespace keeps its staging directory") {
  // A container sharing the volume and the host name: its writer is pid 1 there, and a pid
  // here (init) with another start time. Before, a writer beside it removed its directory.
  if (testing::run_command("unshare --pid --fork --mount-proc true 2>/dev/null") != 0) {
    MESSAGE("skipped: no PID namespace can be made here (unshare --pid)");
    return;
  }
  std::string unshare;
  REQUIRE(testing::run_command("command -v unshare", &unshare) == 0);
  testing::TempDir tmp("staging-pidns");
  const fs::path vocab = write_vocab(tmp.path());
  const fs::path parent = tmp / "parent";
  fs::create_directories(parent);
  const fs::path out = parent / "contained";
  fs::path staging;
  const pid_t pid = start_long_conversion({trim(unshare), "--pid", "--fork", "--mount-proc"}, vocab,
                                          long_corpus(tmp.path()), out, tmp / "log", &staging);
  const std::string marker_text = testing::read_file(staging / ".shardkit-staging");
  CHECK(marker_text.find("\npid 1\n") != std::string::npos);
  CHECK(marker_text.find("\npidns " + pid_ns(::getpid()) + "\n") == std::string::npos);
  // A writer beside it, in this namespace, while it runs.
  testing::write_file(tmp / "small.txt", corpus_lines(10, 9));
  REQUIRE(run_shardify("--task lm --doc-sep line --tokenizer " + shell_quote(vocab.string()) +
                       " --input " + shell_quote((tmp / "small.txt").string()) + " --out " +
                       shell_quote((parent / "beside").string())) == 0);
  int status = 0;
  const bool running = ::waitpid(pid, &status, WNOHANG) == 0;
  if (running) {
    CHECK(fs::exists(staging / "shard-00000.shard"));
    status = wait_for(pid);
  } else {
    MESSAGE("the contained writer ended before the one beside it was done");
  }
  INFO(testing::read_file(tmp / "log"));
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  CHECK(fs::is_regular_file(out / "manifest.json"));
}

TEST_CASE("SIGINT ignored on entry stays ignored; SIGTERM still removes the staging directory") {
  // `trap '' INT`, as a shell gives its background jobs: the signal is ignored across exec.
  testing::TempDir tmp("staging-sigign");
  const fs::path vocab = write_vocab(tmp.path());
  const fs::path out = tmp / "out";
  fs::path staging;
  const pid_t pid =
      start_long_conversion({"/bin/sh", "-c", "trap '' INT; exec \"$@\"", "sh"}, vocab,
                            long_corpus(tmp.path()), out, tmp / "log", &staging);
  ::kill(pid, SIGINT);
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  int status = 0;
  const pid_t ended = ::waitpid(pid, &status, WNOHANG);
  CHECK_MESSAGE(ended == 0, "ended by an ignored SIGINT");
  if (ended == 0) {
    CHECK(fs::exists(staging / "shard-00000.shard"));
    ::kill(pid, SIGTERM);
    status = wait_for(pid);
    CHECK(WIFSIGNALED(status));
    CHECK(WTERMSIG(status) == SIGTERM);
  }
  CHECK(staging_dirs(out).empty());
}

TEST_CASE("a progress line into a closed pipe (SIGPIPE) removes the staging directory") {
  // `shardify ... 2>&1 | head`: the reader goes, and the next progress line raises SIGPIPE in
  // whichever thread writes it.
  testing::TempDir tmp("staging-sigpipe");
  const fs::path vocab = write_vocab(tmp.path());
  const fs::path fifo = tmp / "stderr.fifo";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  const int reader = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  REQUIRE(reader >= 0);
  const fs::path out = tmp / "out";
  fs::path staging;
  const pid_t pid = start_long_conversion(
      {"/bin/sh", "-c",
       "exec \"$@\" --progress always --progress-interval 0.05 2>" + shell_quote(fifo.string()),
       "sh"},
      vocab, long_corpus(tmp.path()), out, tmp / "log", &staging);
  ::close(reader);
  const int status = wait_for(pid);
  CHECK(WIFSIGNALED(status));
  if (WIFSIGNALED(status)) CHECK(WTERMSIG(status) == SIGPIPE);
  CHECK(staging_dirs(out).empty());
  CHECK_FALSE(fs::exists(out));
}

TEST_CASE("an output name of 255 bytes, the most a directory entry holds, converts") {
  // The staging name adds `.` and `.partial-PID-RANDOM`: a target name over 226 bytes used to fail
  // with "cannot create staging directory: File name too long".
  testing::TempDir tmp("staging-long-name");
  const fs::path vocab = write_vocab(tmp.path());
  testing::write_file(tmp / "good.jsonl", "{\"text\": \"fine\"}\n");
  // U+00E9 takes two bytes, so a cut of the name can fall inside a character.
  std::string longest = "x";
  for (int i = 0; i < 127; ++i) longest += "\xC3\xA9";
  REQUIRE(longest.size() == 255);
  std::set<std::string> expected = {"vocab.txt", "good.jsonl"};
  for (const std::string& name : {longest, longest.substr(0, 227), longest.substr(0, 226)}) {
    INFO("name of ", name.size(), " bytes");
    CHECK(run_shardify("--task lm --max-len 16 --tokenizer " + shell_quote(vocab.string()) +
                       " --input " + shell_quote((tmp / "good.jsonl").string()) + " --out " +
                       shell_quote((tmp / name).string())) == 0);
    CHECK(fs::is_regular_file(tmp / name / "manifest.json"));
    expected.insert(name);
  }
  std::set<std::string> found;
  for (const auto& entry : fs::directory_iterator(tmp.path()))
    found.insert(entry.path().filename().string());
  CHECK(found == expected);  // no staging directory left
}

}  // namespace shardkit::reliability
