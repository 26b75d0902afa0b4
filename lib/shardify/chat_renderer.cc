#include "shardify/chat_renderer.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <simdjson.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

#include "core/checksum.h"
#include "core/error.h"
#include "core/regular_file.h"

namespace shardkit::shardify {
namespace fs = std::filesystem;

namespace {

const char* spans_arg(ChatRenderer::Spans s) {
  switch (s) {
    case ChatRenderer::Spans::kAll:
      return "all";
    case ChatRenderer::Spans::kLast:
      return "last";
    case ChatRenderer::Spans::kNone:
      return "none";
  }
  return "none";
}

std::string read_file(const fs::path& path) {
  check_regular_file(path, "chat template file", "the tokenizer_config.json");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(ErrorCode::kInvalidArgument, path.string(), "cannot open the chat template");
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// How long a renderer may stay silent past the time limit before it is killed: the renderer
// ends a rendering that runs past the limit itself, and writes replies at least every 50 ms.
constexpr double kGraceSeconds = 2;
// How long a renderer may take to start and compile its template.
constexpr double kStartSeconds = 60;

std::string format_seconds(double s) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", s);
  return text;
}

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace

// One python3 process serving chat_template.py over a socket pair (a socket, unlike a pipe, can
// be written with MSG_NOSIGNAL: a renderer that died is an error, not a SIGPIPE). Replies are
// read into one buffer that keeps simdjson's padding after its text, and parsed in place.
class ChatRenderer::Process {
 public:
  enum class Read { kLine, kStuck, kDied, kTooLong };

  Process(pid_t pid, int fd) : pid_(pid), fd_(fd) {}
  // Killed, not asked: a renderer stuck in a template would never read its end of input.
  ~Process() {
    ::close(fd_);
    kill_and_reap(pid_);
  }

  pid_t pid() const { return pid_; }

  // Writes `data` whole (lines, each ending in a newline); false when the renderer is gone.
  bool send(std::string_view data) {
    size_t done = 0;
    while (done < data.size()) {
      const ssize_t n = ::send(fd_, data.data() + done, data.size() - done, MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return false;
      done += static_cast<size_t>(n);
    }
    return true;
  }

  // Unblocks a writer waiting on a renderer that no longer reads; the process is not reused.
  void shut_down() { ::shutdown(fd_, SHUT_RDWR); }

  // The next line the renderer writes, without its newline, valid until the next call and
  // followed by simdjson::SIMDJSON_PADDING readable bytes. kStuck when nothing completes a line
  // for `patience` seconds, kTooLong past `max_line` bytes. Throws Error(kTimeout) once
  // `cancel` is set.
  Read receive(std::string_view* line, double patience, const std::atomic<bool>* cancel,
               size_t max_line) {
    start_ = next_start_;
    const auto waiting_since = std::chrono::steady_clock::now();
    for (;;) {
      const size_t nl = buffer_.find('\n', scanned_);
      if (nl != std::string::npos) {
        *line = std::string_view(buffer_).substr(start_, nl - start_);
        next_start_ = scanned_ = nl + 1;
        return Read::kLine;
      }
      scanned_ = buffer_.size();
      if (buffer_.size() - start_ > max_line) return Read::kTooLong;
      compact();
      if (!wait_readable(waiting_since, patience, cancel)) return Read::kStuck;
      const size_t old = buffer_.size();
      buffer_.resize(old + kChunk + simdjson::SIMDJSON_PADDING);
      const ssize_t n = ::read(fd_, buffer_.data() + old, kChunk);
      buffer_.resize(old + static_cast<size_t>(std::max<ssize_t>(n, 0)));
      if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN)) return Read::kDied;
    }
  }

  // How the process ended, once it closed its output ("exit status 1", "killed by signal 9").
  std::string how_it_ended() {
    int status = 0;
    for (int i = 0; i < 50; ++i) {  // it closed its output: it is exiting
      const pid_t r = ::waitpid(pid_, &status, WNOHANG);
      if (r == pid_) {
        pid_ = -1;  // reaped
        if (WIFSIGNALED(status)) return "killed by signal " + std::to_string(WTERMSIG(status));
        return "exit status " + std::to_string(WEXITSTATUS(status));
      }
      if (r < 0 && errno != EINTR) break;
      ::usleep(2000);
    }
    return "it closed its output";
  }

 private:
  static constexpr size_t kChunk = 1 << 16;

  // Drops the lines already handed out once they are most of the buffer.
  void compact() {
    if (start_ == 0 || start_ < buffer_.size() / 2) return;
    buffer_.erase(0, start_);
    scanned_ -= start_;
    next_start_ -= start_;
    start_ = 0;
  }

  // Whether there is something to read before `patience` seconds from `since`; checks `cancel`
  // every 0.1 s.
  bool wait_readable(std::chrono::steady_clock::time_point since, double patience,
                     const std::atomic<bool>* cancel) {
    for (;;) {
      if (cancel && cancel->load())
        throw Error(ErrorCode::kTimeout, "", "interrupted while rendering chat templates");
      const double left = patience - seconds_since(since);
      if (left <= 0) return false;
      pollfd p{fd_, POLLIN, 0};
      const int r = ::poll(&p, 1, static_cast<int>(std::min(left, 0.1) * 1000) + 1);
      if (r > 0) return true;
      if (r < 0 && errno != EINTR) return true;  // read() reports it
    }
  }

  pid_t pid_;
  int fd_;
  std::string buffer_;
  size_t start_ = 0, next_start_ = 0, scanned_ = 0;
};

namespace {

// The renderer's first line: {"ready": true, "generation": ...} or {"error": ...}. Returns whether
// the template marks its own spans. Anything else names the renderer: an unparsed line has no
// element to look into.
bool ready_line(std::string_view hello, const std::string& script, const std::string& config) {
  simdjson::dom::parser parser;
  simdjson::dom::element e;
  if (parser.parse(hello.data(), hello.size(), false).get(e) || !e.is_object())
    throw Error(ErrorCode::kInvalidArgument, script,
                "the chat template renderer's first line is not its JSON ready line: \"" +
                    std::string(hello.substr(0, 200)) + "\"");
  bool ready = false;
  if (e["ready"].get_bool().get(ready) || !ready) {
    std::string_view why;
    if (e["error"].get_string().get(why)) why = hello;
    throw Error(ErrorCode::kInvalidArgument, config, std::string(why));
  }
  bool generation = false;
  if (e["generation"].get_bool().get(generation)) generation = false;
  return generation;
}

}  // namespace

fs::path ChatRenderer::script_path() {
  if (const char* env = std::getenv("SHARDKIT_CHAT_RENDERER"); env && *env) return env;
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const fs::path bin = exe.parent_path();
    for (const fs::path& p : {bin / ".." / "share" / "shardkit" / "chat_template.py",
                              bin / ".." / ".." / "chat_template.py"})
      if (fs::exists(p, ec)) return p.lexically_normal();
  }
  return fs::path(SHARDKIT_SOURCE_DIR) / "python" / "shardkit" / "chat_template.py";
}

std::unique_ptr<ChatRenderer::Process> ChatRenderer::start(bool* generation) const {
  const fs::path script = script_path();
  if (!fs::exists(script))
    throw Error(ErrorCode::kInvalidArgument, script.string(),
                "the chat template renderer is missing (set SHARDKIT_CHAT_RENDERER to "
                "python/shardkit/chat_template.py)");
  const char* python_env = std::getenv("SHARDKIT_PYTHON");
  const std::string python = python_env && *python_env ? python_env : "python3";
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0)
    throw Error(ErrorCode::kIo, "", std::string("socketpair: ") + std::strerror(errno));
  char seconds[32];
  std::snprintf(seconds, sizeof seconds, "%.17g", limits_.seconds);
  // -I: neither PYTHONPATH nor the script's own directory can shadow the standard library.
  const std::vector<std::string> argv{python,
                                      "-I",
                                      script.string(),
                                      "--serve",
                                      config_.string(),
                                      spans_arg(spans_),
                                      std::to_string(limits_.max_bytes),
                                      seconds};
  pid_t pid = -1;
  try {
    pid = launcher_.launch(argv, fds[1]);
  } catch (const Error& e) {
    ::close(fds[0]);
    ::close(fds[1]);
    throw Error(ErrorCode::kInvalidArgument, python,
                "cannot start Python for the chat template: " + e.reason() +
                    " (install python3 and python3-jinja2, or set SHARDKIT_PYTHON)");
  }
  ::close(fds[1]);
  auto process = std::make_unique<Process>(pid, fds[0]);
  std::string_view hello;
  const Process::Read r = process->receive(&hello, kStartSeconds, limits_.cancel, 1 << 20);
  if (r != Process::Read::kLine)
    throw Error(ErrorCode::kInvalidArgument, config_.string(),
                r == Process::Read::kStuck
                    ? "the chat template renderer was not ready within " +
                          std::to_string(static_cast<int>(kStartSeconds)) + " s"
                    : "the chat template renderer stopped before it was ready (" +
                          process->how_it_ended() + "; its own message, if any, is above)");
  const bool has_generation = ready_line(hello, script.string(), config_.string());
  if (generation) *generation = has_generation;
  return process;
}

ChatRenderer::ChatRenderer(fs::path config, Spans spans, RenderLimits limits)
    : config_(std::move(config)), spans_(spans), limits_(limits) {
  // On demand: only the template is parsed (Llama 3's file has a model_max_length of 10^30, a
  // number the DOM parser refuses). The fingerprint covers its JSON text as the file has it.
  const simdjson::padded_string text(read_file(config_));
  simdjson::ondemand::parser parser;
  simdjson::ondemand::document doc;
  simdjson::ondemand::value tpl;
  std::string_view raw;
  if (parser.iterate(text).get(doc) || doc.find_field_unordered("chat_template").get(tpl) ||
      simdjson::to_json_string(tpl).get(raw))
    throw Error(ErrorCode::kInvalidArgument, config_.string(),
                "not a tokenizer_config.json with a chat_template");
  fingerprint_ = checksum_hex(xxh3_64(raw.data(), raw.size()));
  idle_.push_back(start(&generation_));
}

ChatRenderer::~ChatRenderer() = default;

namespace {

// `line` is followed by simdjson's padding (Process::receive), so it is parsed in place: a long
// conversation is not copied once more.
RenderedChat parse_reply(std::string_view line, simdjson::dom::parser& parser) {
  RenderedChat out;
  simdjson::dom::element e;
  if (parser.parse(line.data(), line.size(), false).get(e) || !e.is_object())
    throw Error(ErrorCode::kIo, ChatRenderer::script_path().string(),
                "the chat template renderer answered something other than JSON");
  std::string_view s;
  if (!e["error"].get_string().get(s)) {
    out.error.assign(s);
    return out;
  }
  simdjson::dom::array spans;
  if (e["text"].get_string().get(s) || e["spans"].get_array().get(spans))
    throw Error(ErrorCode::kIo, ChatRenderer::script_path().string(),
                "the chat template renderer's answer lacks text or spans");
  out.text.assign(s);
  for (simdjson::dom::element span : spans) {
    uint64_t a = 0, b = 0;
    simdjson::dom::array pair;
    if (span.get_array().get(pair) || pair.size() != 2 || pair.at(0).get_uint64().get(a) ||
        pair.at(1).get_uint64().get(b) || a > b || b > out.text.size())
      throw Error(ErrorCode::kIo, ChatRenderer::script_path().string(),
                  "the chat template renderer sent a span outside its text");
    out.spans.emplace_back(static_cast<uint32_t>(a), static_cast<uint32_t>(b));
  }
  return out;
}

}  // namespace

std::unique_ptr<ChatRenderer::Process> ChatRenderer::check_out() const {
  {
    std::lock_guard lock(mutex_);
    if (!idle_.empty()) {
      auto process = std::move(idle_.back());
      idle_.pop_back();
      return process;
    }
  }
  return start();
}

void ChatRenderer::check_in(std::unique_ptr<Process> process) const {
  std::lock_guard lock(mutex_);
  idle_.push_back(std::move(process));
}

std::string ChatRenderer::exchange(Process& process, const std::vector<std::string>& messages,
                                   size_t* next, size_t end,
                                   const std::function<void(size_t, RenderedChat&&)>& each) const {
  std::string requests;
  for (size_t i = *next; i < end; ++i) {
    requests += messages[i];
    requests.push_back('\n');
  }
  // The requests go in while the replies come out: written first, more than a socket buffer of
  // them would wait on a renderer waiting for its replies to be read. A failed write shows as
  // the renderer's death below.
  std::thread writer([&] { process.send(requests); });
  // A reply is JSON of at most max_bytes of text (6 bytes for an escaped one) and its spans.
  const size_t max_line = 6 * limits_.max_bytes + requests.size() + (1 << 20);
  const double patience = limits_.seconds + kGraceSeconds;
  std::string failure;
  try {
    simdjson::dom::parser parser;
    for (; *next < end; ++*next) {
      std::string_view line;
      const Process::Read r = process.receive(&line, patience, limits_.cancel, max_line);
      if (r == Process::Read::kStuck) {
        failure = "gave no answer for " + format_seconds(patience) + " s (--render-timeout)";
      } else if (r == Process::Read::kTooLong) {
        failure = "sent an answer of more than " + std::to_string(max_line) + " bytes";
      } else if (r == Process::Read::kDied) {
        failure = "died (" + process.how_it_ended() + ")";
      } else {
        each(*next, parse_reply(line, parser));
        continue;
      }
      break;
    }
  } catch (...) {
    process.shut_down();
    writer.join();
    throw;
  }
  if (!failure.empty()) process.shut_down();
  writer.join();
  return failure;
}

void ChatRenderer::render(const std::vector<std::string>& messages,
                          const std::function<void(size_t, RenderedChat&&)>& each) const {
  size_t next = 0;
  // After a renderer failed, conversations go one at a time: it may have been working past
  // the first one it had not answered (replies travel in groups), and only a conversation
  // rendered alone can be blamed.
  bool one_at_a_time = false;
  while (next < messages.size()) {
    std::unique_ptr<Process> process = check_out();
    const size_t end = one_at_a_time ? next + 1 : messages.size();
    const std::string failure = exchange(*process, messages, &next, end, each);
    if (failure.empty()) {
      check_in(std::move(process));
      continue;
    }
    process.reset();  // killed and reaped
    if (!one_at_a_time) {
      one_at_a_time = true;
      continue;
    }
    RenderedChat failed;
    failed.error = "chat template: its renderer " + failure + " on this conversation";
    each(next++, std::move(failed));
  }
}

}  // namespace shardkit::shardify
