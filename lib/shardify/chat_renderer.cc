#include "shardify/chat_renderer.h"

#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <simdjson.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

#include "core/checksum.h"
#include "core/error.h"

extern char** environ;

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
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(ErrorCode::kInvalidArgument, path.string(), "cannot open the chat template");
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

// One python3 process serving chat_template.py over a socket pair (a socket, unlike a pipe, can
// be written with MSG_NOSIGNAL: a renderer that died is an error, not a SIGPIPE).
class ChatRenderer::Process {
 public:
  Process(pid_t pid, int fd) : pid_(pid), fd_(fd) {}
  ~Process() {
    ::close(fd_);  // the renderer sees end of input and exits
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
  }

  // Writes `data` whole (lines, each ending in a newline).
  void send(std::string_view data) {
    size_t done = 0;
    while (done < data.size()) {
      const ssize_t n = ::send(fd_, data.data() + done, data.size() - done, MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) throw died("writing to it failed: " + std::string(std::strerror(errno)));
      done += static_cast<size_t>(n);
    }
  }

  // Unblocks a writer waiting on a renderer that no longer reads; the process is not reused.
  void shut_down() { ::shutdown(fd_, SHUT_RDWR); }

  // The next line the renderer writes, without its newline.
  std::string receive() {
    for (;;) {
      const size_t nl = buffer_.find('\n', scanned_);
      if (nl != std::string::npos) {
        std::string line = buffer_.substr(0, nl);
        buffer_.erase(0, nl + 1);
        scanned_ = 0;
        return line;
      }
      scanned_ = buffer_.size();
      char chunk[65536];
      const ssize_t n = ::read(fd_, chunk, sizeof chunk);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) throw died("it closed its output");
      buffer_.append(chunk, static_cast<size_t>(n));
    }
  }

 private:
  Error died(const std::string& how) const {
    return Error(ErrorCode::kIo, ChatRenderer::script_path().string(),
                 "the chat template renderer (pid " + std::to_string(pid_) + ") stopped: " + how +
                     " (its own message, if any, is above)");
  }

  pid_t pid_;
  int fd_;
  std::string buffer_;
  size_t scanned_ = 0;
};

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
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  const std::string script_s = script.string(), config_s = config_.string();
  // -I: neither PYTHONPATH nor the script's own directory can shadow the standard library.
  std::vector<char*> argv{const_cast<char*>(python.c_str()),
                          const_cast<char*>("-I"),
                          const_cast<char*>(script_s.c_str()),
                          const_cast<char*>("--serve"),
                          const_cast<char*>(config_s.c_str()),
                          const_cast<char*>(spans_arg(spans_)),
                          nullptr};
  pid_t pid = 0;
  const int rc = ::posix_spawnp(&pid, python.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(fds[1]);
  if (rc != 0) {
    ::close(fds[0]);
    throw Error(ErrorCode::kInvalidArgument, python,
                std::string("cannot start Python for the chat template: ") + std::strerror(rc) +
                    " (install python3 and python3-jinja2, or set SHARDKIT_PYTHON)");
  }
  auto process = std::make_unique<Process>(pid, fds[0]);
  const std::string hello = process->receive();
  simdjson::dom::parser parser;
  simdjson::dom::element e;
  bool ready = false;
  if (parser.parse(hello).get(e) || e["ready"].get_bool().get(ready) || !ready) {
    std::string_view why;
    if (!e.is_object() || e["error"].get_string().get(why)) why = hello;
    throw Error(ErrorCode::kInvalidArgument, config_.string(), std::string(why));
  }
  if (generation && e["generation"].get_bool().get(*generation)) *generation = false;
  return process;
}

ChatRenderer::ChatRenderer(fs::path config, Spans spans)
    : config_(std::move(config)), spans_(spans) {
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

RenderedChat parse_reply(const std::string& line, simdjson::dom::parser& parser) {
  RenderedChat out;
  simdjson::dom::element e;
  if (parser.parse(line).get(e) || !e.is_object())
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

void ChatRenderer::render(const std::vector<std::string>& messages,
                          const std::function<void(size_t, RenderedChat&&)>& each) const {
  if (messages.empty()) return;
  std::unique_ptr<Process> process;
  {
    std::lock_guard lock(mutex_);
    if (!idle_.empty()) {
      process = std::move(idle_.back());
      idle_.pop_back();
    }
  }
  if (!process) process = start();
  std::string requests;
  for (const std::string& m : messages) {
    requests += m;
    requests.push_back('\n');
  }
  // The requests go in while the replies come out: written first, more than a socket buffer of
  // them would wait on a renderer waiting for its replies to be read.
  std::exception_ptr write_error;
  std::thread writer([&] {
    try {
      process->send(requests);
    } catch (...) {
      write_error = std::current_exception();
    }
  });
  try {
    simdjson::dom::parser parser;
    for (size_t i = 0; i < messages.size(); ++i) each(i, parse_reply(process->receive(), parser));
  } catch (...) {
    process->shut_down();
    writer.join();
    throw;
  }
  writer.join();
  if (write_error) std::rethrow_exception(write_error);
  std::lock_guard lock(mutex_);
  idle_.push_back(std::move(process));
}

}  // namespace shardkit::shardify
