// A chat template is code (issue 28, item 2). Each conversation's rendering is bounded in bytes
// (--max-render-bytes, by default 32 x --max-len and at least 64 KiB), in time
// (--render-timeout) and in the renderer's memory; whatever a template raises is that row's error,
// named by file and line and skippable; a renderer that stops answering is killed and replaced;
// renderers die with shardify, whether it is killed (SIGKILL) or interrupted (SIGINT).
// Before: ZeroDivisionError, RecursionError and OverflowError killed the renderer and failed the
// whole run, nested loops hung shardify forever, a 1 GB rendering took 16.5 GB, and a killed
// shardify left its renderer running at 99% CPU.
#include <doctest/doctest.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include <chrono>
#include <fstream>
#include <set>
#include <thread>

#include "core/dataset.h"
#include "process_util.h"
#include "shardify_fixture.h"

namespace shardkit::reliability {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// What each row's content makes the template do. Every branch but the last is hostile.
const char* const kTemplate =
    "{%- set c = messages[0].content -%}"
    "{%- if c == 'zero' -%}{{ 1 / 0 }}"
    "{%- elif c == 'recurse' -%}{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}"
    "{%- elif c == 'overflow' -%}{{ 10.0 ** 400 }}"
    "{%- elif c == 'repeat' -%}{{ 'x' * 1000000000 }}"
    "{%- elif c == 'grow' -%}{% for i in range(100000) %}{{ 'y' * 1000 }}{% endfor %}"
    "{%- elif c == 'power' -%}{{ 10 ** (10 ** 9) }}"
    "{%- elif c == 'wide' -%}{{ '%0999999999d' % 1 }}"
    "{%- elif c == 'loop' -%}{% for i in range(100000) %}{% for j in range(100000) %}"
    "{% endfor %}{% endfor %}"
    "{%- else -%}{% for m in messages %}[CLS] {{ m.content }} [SEP] {% endfor %}{%- endif -%}";

struct Hostile {
  const char* content;
  const char* reason;  // in the row's error
};
const Hostile kHostile[] = {
    {"zero", "ZeroDivisionError"},
    {"recurse", "RecursionError"},
    {"overflow", "OverflowError"},
    {"repeat", "(--max-render-bytes)"},
    {"grow", "exceeds 65536 bytes (--max-render-bytes)"},
    {"power", "(--max-render-bytes)"},
    {"wide", "ran out of the memory allowed to it"},
    {"loop", "took longer than 1 s (--render-timeout)"},
};

std::string row(const std::string& content) {
  return "{\"messages\": [{\"role\": \"user\", \"content\": " + testing::json_string(content) +
         "}, {\"role\": \"assistant\", \"content\": \"the data\"}]}\n";
}

fs::path write_config(const fs::path& dir, const std::string& tpl) {
  const fs::path p = dir / "tokenizer_config.json";
  testing::write_file(
      p, "{\"chat_template\": " + testing::json_string(tpl) + ", \"eos_token\": \"[SEP]\"}");
  return p;
}

std::string sft_args(const fs::path& vocab, const fs::path& config, const fs::path& input,
                     int max_len = 64, const std::string& timeout = "1") {
  return "--task sft --messages-field messages --max-len " + std::to_string(max_len) +
         " --render-timeout " + timeout + " --tokenizer " + shell_quote(vocab.string()) +
         " --chat-template " + shell_quote(config.string()) + " --input " +
         shell_quote(input.string());
}

uint64_t json_number(const std::string& out, const std::string& key) {
  const size_t at = out.find("\"" + key + "\":");
  REQUIRE_MESSAGE(at != std::string::npos, "no '" << key << "' in: " << out);
  return std::stoull(out.substr(at + key.size() + 3));
}

// The live children of `parent` (zombies are gone: nobody may be reaping them here).
std::vector<pid_t> children_of(pid_t parent) {
  std::vector<pid_t> found;
  for (const auto& e : fs::directory_iterator("/proc")) {
    const std::string name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    const std::string stat = testing::read_file(e.path() / "stat");
    const size_t paren = stat.rfind(')');
    if (paren == std::string::npos || paren + 4 >= stat.size()) continue;
    const char state = stat[paren + 2];
    const long ppid = std::strtol(stat.c_str() + paren + 4, nullptr, 10);
    if (ppid == parent && state != 'Z' && state != 'X') found.push_back(std::stoi(name));
  }
  return found;
}

bool alive(pid_t pid) {
  const std::string stat = testing::read_file("/proc/" + std::to_string(pid) + "/stat");
  const size_t paren = stat.rfind(')');
  return paren != std::string::npos && paren + 2 < stat.size() && stat[paren + 2] != 'Z' &&
         stat[paren + 2] != 'X';
}

// Waits up to `seconds` for `pid` to end; kills it (a leftover of the code before the fix) and
// returns false if it does not.
bool ends_within(pid_t pid, double seconds) {
  const auto start = Clock::now();
  while (seconds_since(start) < seconds) {
    if (!alive(pid)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ::kill(pid, SIGKILL);
  return false;
}

}  // namespace

TEST_CASE("whatever a template raises, and every limit it meets, is that row's error") {
  testing::TempDir tmp("chat-limits");
  const fs::path vocab = write_vocab(tmp.path());
  const fs::path config = write_config(tmp.path(), kTemplate);
  for (const Hostile& h : kHostile) {
    const std::string content = h.content;
    INFO("row content: ", content);
    const fs::path input = tmp / (std::string(h.content) + ".jsonl");
    testing::write_file(input, row("hello world") + row(h.content) + row("the data"));
    const fs::path fail = tmp / (std::string("fail-") + h.content);
    const fs::path skip = tmp / (std::string("skip-") + h.content);
    std::string out;
    const auto start = Clock::now();
    CHECK(run_shardify(sft_args(vocab, config, input) + " --out " + shell_quote(fail.string()),
                       &out) == 1);
    INFO(out);
    CHECK(out.find(input.filename().string() + ":2: chat template: ") != std::string::npos);
    CHECK(out.find(h.reason) != std::string::npos);
    CHECK_FALSE(fs::exists(fail));
    CHECK(run_shardify(sft_args(vocab, config, input) + " --on-error skip --json --out " +
                           shell_quote(skip.string()),
                       &out) == 0);
    CHECK(json_number(out, "skipped") == 1);
    CHECK(json_number(out, "records") == 2);
    CHECK(out.find(":2: chat template: ") != std::string::npos);
    MESSAGE(content, ": both runs in ", seconds_since(start), " s");
  }
}

TEST_CASE("all the hostile rows in one run: bounded memory, the good rows kept") {
  testing::TempDir tmp("chat-limits-all");
  const fs::path vocab = write_vocab(tmp.path());
  const fs::path config = write_config(tmp.path(), kTemplate);
  std::string rows = row("hello world");
  for (const Hostile& h : kHostile) rows += row(h.content) + row("the data");
  const fs::path input = tmp / "all.jsonl";
  testing::write_file(input, rows);
  std::string out;
  REQUIRE(run_shardify(sft_args(vocab, config, input) + " --threads 2 --on-error skip --json " +
                           "--out " + shell_quote((tmp / "ds").string()),
                       &out) == 0);
  INFO(out);
  CHECK(json_number(out, "skipped") == std::size(kHostile));
  CHECK(json_number(out, "records") == std::size(kHostile) + 1);
  // The largest resident size of shardify and of every renderer it ran (reaped by shardify, so
  // counted in this process's children): a 1 GB rendering took 16.5 + 6.9 GB before.
  struct rusage usage {};
  ::getrusage(RUSAGE_CHILDREN, &usage);
  const double peak_mib = usage.ru_maxrss / 1024.0;
  MESSAGE("peak resident size of shardify and its renderers: ", peak_mib, " MiB");
#ifndef __SANITIZE_ADDRESS__  // AddressSanitizer's quarantine and shadow memory say nothing here
  CHECK(peak_mib < 768);
#endif
}

TEST_CASE("the default byte limit follows --max-len; --max-render-bytes raises it") {
  testing::TempDir tmp("chat-limits-bytes");
  const fs::path vocab = write_vocab(tmp.path());
  const fs::path config =
      write_config(tmp.path(), "{% for m in messages %}[CLS] {{ m.content }} [SEP] {% endfor %}");
  std::string long_text;
  while (long_text.size() < 100000) long_text += "hello world the data ";
  const fs::path input = tmp / "long.jsonl";
  testing::write_file(input, row("hello") + row(long_text));
  auto run = [&](const std::string& flags, const std::string& name, std::string* out,
                 int max_len = 64, const std::string& timeout = "1") {
    return run_shardify(sft_args(vocab, config, input, max_len, timeout) + " " + flags +
                            " --json --out " + shell_quote((tmp / name).string()),
                        out);
  };
  std::string out;
  // --max-len 64 (sft_args): 64 KiB, less than the 100 KB conversation.
  CHECK(run("", "a", &out) == 1);
  CHECK_MESSAGE(out.find("long.jsonl:2: chat template: the rendered conversation exceeds 65536 "
                         "bytes (--max-render-bytes)") != std::string::npos,
                out);
  // --max-len 4096: 128 KiB. The conversation renders, then is dropped for its length.
  REQUIRE_MESSAGE(run("", "b", &out, 4096) == 0, out);
  CHECK(json_number(out, "dropped") == 1);
  REQUIRE_MESSAGE(run("--max-render-bytes 200000", "c", &out) == 0, out);
  CHECK(json_number(out, "dropped") == 1);
  CHECK(run("--max-render-bytes 99999", "d", &out) == 1);
  CHECK_MESSAGE(out.find("exceeds 99999 bytes") != std::string::npos, out);
  // The renderer's memory limit is 16 times this: past 1 TiB (2^40) it overflowed in Python and
  // was blamed on the template; such values are refused by the option now.
  CHECK(run("--max-render-bytes 1000000000000000000", "f", &out) != 0);
  CHECK_MESSAGE(out.find("--max-render-bytes must be from 1 to 1099511627776") != std::string::npos,
                out);
  CHECK_MESSAGE(run("--max-render-bytes 1099511627776", "g", &out, 4096) == 0, out);
  CHECK(run("", "e", &out, 64, "0") != 0);
  CHECK_MESSAGE(out.find("--render-timeout must be from 0.001 to 1000000") != std::string::npos,
                out);
}

TEST_CASE("a renderer that stops answering or dies is replaced; the row it was on is blamed") {
  testing::TempDir tmp("chat-limits-stuck");
  const fs::path vocab = write_vocab(tmp.path());
  const fs::path config = write_config(tmp.path(), "unused");
  // A stand-in for a renderer stuck where no Python code runs (SIGALRM blocked, as in a long C
  // call) or killed by the kernel, on rows 'stall' and 'die'. It answers the others in one
  // write per read, as the real renderer does, so the stuck row is not the first unanswered one.
  const fs::path fake = tmp / "fake_renderer.py";
  testing::write_file(fake, R"(import json, os, signal, sys, time
out = sys.stdout.buffer
out.write(b'{"ready": true, "generation": false}\n'); out.flush()
while True:
    data = sys.stdin.buffer.read1(1 << 16)
    if not data:
        break
    replies = []
    for line in data.split(b"\n"):
        if not line:
            continue
        content = json.loads(line)[0]["content"]
        if content == "stall":
            signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGALRM])
            time.sleep(3600)
        if content == "die":
            os.kill(os.getpid(), signal.SIGKILL)
        replies.append(json.dumps({"text": "[CLS] " + content + " [SEP]", "spans": [[0, 5]]}))
    out.write(("\n".join(replies) + "\n").encode()); out.flush()
)");
  const fs::path input = tmp / "rows.jsonl";
  testing::write_file(input,
                      row("hello") + row("stall") + row("world") + row("die") + row("the data"));
  const std::string env = "SHARDKIT_CHAT_RENDERER=" + shell_quote(fake.string()) + " ";
  std::string out;
  const auto start = Clock::now();
  CHECK(testing::run_command(env + shardify_path() + " " + sft_args(vocab, config, input) +
                                 " --out " + shell_quote((tmp / "a").string()),
                             &out) == 1);
  CHECK_MESSAGE(out.find("rows.jsonl:2: chat template: its renderer gave no answer for 3 s") !=
                    std::string::npos,
                out);
  REQUIRE(testing::run_command(env + shardify_path() + " " + sft_args(vocab, config, input) +
                                   " --on-error skip --json --out " +
                                   shell_quote((tmp / "b").string()),
                               &out) == 0);
  INFO(out);
  CHECK(json_number(out, "skipped") == 2);
  CHECK(json_number(out, "records") == 3);
  CHECK(out.find("rows.jsonl:2: chat template: its renderer gave no answer") != std::string::npos);
  CHECK(out.find("rows.jsonl:4: chat template: its renderer died (killed by signal 9)") !=
        std::string::npos);
  MESSAGE("two runs with a stuck and a dying renderer: ", seconds_since(start), " s");
}

TEST_CASE("a renderer whose first line is not its JSON ready line is an error naming it") {
  testing::TempDir tmp("chat-limits-ready");
  const fs::path vocab = write_vocab(tmp.path());
  const fs::path config = write_config(tmp.path(), "unused");
  const fs::path input = tmp / "rows.jsonl";
  testing::write_file(input, row("hello"));
  // Before: a first line that did not parse was looked into as an object, and shardify died of
  // SIGSEGV.
  for (const std::string ready : {"", "not json", "[1, 2]"}) {
    INFO("ready line: '", ready, "'");
    const fs::path fake = tmp / "fake_renderer.py";
    testing::write_file(fake, std::string("import sys\nsys.stdout.write(") +
                                  testing::json_string(ready + "\n") +
                                  ")\nsys.stdout.flush()\nsys.stdin.read()\n");
    const std::string env = "SHARDKIT_CHAT_RENDERER=" + shell_quote(fake.string()) + " ";
    std::string out;
    const int rc =
        testing::run_command(env + shardify_path() + " " + sft_args(vocab, config, input) +
                                 " --out " + shell_quote((tmp / "out").string()),
                             &out);
    INFO(out);
    CHECK(rc == 1);
    CHECK(out.find(fake.string()) != std::string::npos);
    CHECK(out.find("is not its JSON ready line") != std::string::npos);
    CHECK_FALSE(fs::exists(tmp / "out"));
  }
}

TEST_CASE("--on-error fail ends at the first row that times out, not after its whole batch") {
  testing::TempDir tmp("chat-limits-failfast");
  const fs::path vocab = write_vocab(tmp.path());
  const fs::path config = write_config(tmp.path(), kTemplate);
  std::string rows = row("hello world");
  for (int i = 0; i < 20; ++i) rows += row("loop");
  const fs::path input = tmp / "loops.jsonl";
  testing::write_file(input, rows);
  for (const std::string threads : {"1", "2"}) {
    INFO("threads ", threads);
    std::string out;
    const auto start = Clock::now();
    CHECK(run_shardify(sft_args(vocab, config, input) + " --threads " + threads + " --out " +
                           shell_quote((tmp / ("out-" + threads)).string()),
                       &out) == 1);
    const double took = seconds_since(start);
    INFO(out);
    CHECK(out.find("loops.jsonl:2: chat template: rendering took longer than 1 s") !=
          std::string::npos);
    // One timeout of 1 s, the renderer's start and the tokenizer's load. Before: 20 s, one
    // timeout per row of the batch.
    CHECK(took < 6);
    MESSAGE("threads ", threads, ": failed in ", took, " s");
  }
}

TEST_CASE("--chat-template naming a device, a FIFO or a directory is refused at once") {
  testing::TempDir tmp("chat-limits-special");
  const fs::path vocab = write_vocab(tmp.path());
  const fs::path input = tmp / "rows.jsonl";
  testing::write_file(input, row("hello"));
  const fs::path fifo = tmp / "fifo";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  // Before: /dev/zero was read into memory without end, and a FIFO blocked in open() forever
  // (the timeout ends what a regression would leave running).
  for (const fs::path& config : {fifo, tmp.path(), fs::path("/dev/zero")}) {
    INFO(config);
    std::string out;
    const auto start = Clock::now();
    CHECK(testing::run_command("timeout 10 " + shardify_path() + " " +
                                   sft_args(vocab, config, input) + " --out " +
                                   shell_quote((tmp / "out").string()),
                               &out) == 1);
    CHECK_MESSAGE(out.find(config.string() + ": not a chat template file but a directory, pipe "
                                             "or device") != std::string::npos,
                  out);
    CHECK(seconds_since(start) < 5);
  }
}

TEST_CASE("renderers end with shardify: killed (SIGKILL) or interrupted (SIGINT)") {
  testing::TempDir tmp("chat-limits-signals");
  const fs::path vocab = write_vocab(tmp.path());
  const fs::path config = write_config(tmp.path(), kTemplate);
  const fs::path input = tmp / "loop.jsonl";
  testing::write_file(input, row("loop"));
  for (const int sig : {SIGKILL, SIGINT, SIGTERM}) {
    INFO("signal ", sig);
    const fs::path out = tmp / ("out-" + std::to_string(sig));
    std::vector<std::string> argv = {shardify_path(), "--task",
                                     "sft",           "--messages-field",
                                     "messages",      "--render-timeout",
                                     "3600",          "--tokenizer",
                                     vocab.string(),  "--chat-template",
                                     config.string(), "--input",
                                     input.string(),  "--out",
                                     out.string()};
    const pid_t pid = spawn(argv, (tmp / "log").string());
    // The renderer starts, reads the conversation and spins in the template's loops.
    std::vector<pid_t> renderers;
    const auto start = Clock::now();
    while (renderers.empty() && seconds_since(start) < 30) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      renderers = children_of(pid);
    }
    REQUIRE(renderers.size() == 1);
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    const auto sent = Clock::now();
    ::kill(pid, sig);
    const int status = wait_for(pid);
    const double took = seconds_since(sent);
    CHECK(WIFSIGNALED(status));
    CHECK(WTERMSIG(status) == sig);
    CHECK(took < 1.0);
    CHECK_MESSAGE(ends_within(renderers[0], 2.0), "renderer pid " << renderers[0] << " outlived "
                                                                  << "shardify");
    CHECK_FALSE(fs::exists(out));
    // SIGINT and SIGTERM also remove the staging directory (SIGKILL leaves it to the next run).
    if (sig != SIGKILL) CHECK(staging_dirs(out).empty());
    MESSAGE("signal ", sig, ": shardify ended in ", took, " s, its renderer with it");
  }
}

}  // namespace shardkit::reliability
