#include "shardify/tethered_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>

#include "core/error.h"

extern char** environ;

namespace shardkit::shardify {
namespace {

// `name` itself when it holds a slash, else the first executable of that name on PATH (found
// here: after fork only async-signal-safe calls may run, and execvp may allocate).
std::string resolve_program(const std::string& name) {
  if (name.find('/') != std::string::npos) return name;
  const char* path = std::getenv("PATH");
  std::string dirs = path && *path ? path : "/usr/local/bin:/usr/bin:/bin";
  size_t start = 0;
  while (start <= dirs.size()) {
    size_t end = dirs.find(':', start);
    if (end == std::string::npos) end = dirs.size();
    const std::string dir = end > start ? dirs.substr(start, end - start) : ".";
    const std::string candidate = dir + "/" + name;
    if (::access(candidate.c_str(), X_OK) == 0 && !std::filesystem::is_directory(candidate))
      return candidate;
    start = end + 1;
  }
  return name;  // execve fails with ENOENT, reported by the caller
}

// In the child, between fork and exec: async-signal-safe calls only. Reports a failure as its
// errno on `report` (close-on-exec, so a successful exec reports nothing).
[[noreturn]] void become_child(const char* program, char* const* argv, int io, int report,
                               pid_t parent) {
  int err = 0;
  sigset_t none;
  sigemptyset(&none);
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || ::getppid() != parent)
    err = ESRCH;  // the parent is already gone: do not run orphaned
  else if (::pthread_sigmask(SIG_SETMASK, &none, nullptr) != 0 ||
           ::sigaction(SIGINT, &ignore, nullptr) != 0 || ::dup2(io, STDIN_FILENO) < 0 ||
           ::dup2(io, STDOUT_FILENO) < 0)
    err = errno;
  if (err == 0) {
    ::execve(program, argv, environ);
    err = errno;
  }
  ssize_t ignored = ::write(report, &err, sizeof err);
  (void)ignored;
  ::_exit(127);
}

}  // namespace

struct TetheredLauncher::Request {
  const std::vector<std::string>* argv = nullptr;
  int io = -1;
  pid_t pid = -1;
  std::exception_ptr error;
  bool done = false;
};

TetheredLauncher::TetheredLauncher() : thread_([this] { serve(); }) {}

TetheredLauncher::~TetheredLauncher() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

pid_t TetheredLauncher::launch(const std::vector<std::string>& argv, int io) {
  Request request;
  request.argv = &argv;
  request.io = io;
  std::unique_lock lock(mutex_);
  requests_.push_back(&request);
  wake_.notify_all();
  wake_.wait(lock, [&] { return request.done; });
  if (request.error) std::rethrow_exception(request.error);
  return request.pid;
}

void TetheredLauncher::serve() {
  for (;;) {
    Request* r = nullptr;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [&] { return stopping_ || !requests_.empty(); });
      if (requests_.empty()) return;
      r = requests_.front();
      requests_.pop_front();
    }
    try {
      const std::string program = resolve_program(r->argv->front());
      std::vector<char*> args;
      for (const std::string& a : *r->argv) args.push_back(const_cast<char*>(a.c_str()));
      args.push_back(nullptr);
      int report[2];
      if (::pipe2(report, O_CLOEXEC) != 0)
        throw Error(ErrorCode::kIo, program, std::string("pipe: ") + std::strerror(errno));
      const pid_t parent = ::getpid();
      const pid_t pid = ::fork();
      if (pid == 0) become_child(program.c_str(), args.data(), r->io, report[1], parent);
      ::close(report[1]);
      int child_errno = 0;
      ssize_t n;
      while ((n = ::read(report[0], &child_errno, sizeof child_errno)) < 0 && errno == EINTR) {
      }
      ::close(report[0]);
      if (pid < 0)
        throw Error(ErrorCode::kIo, program, std::string("fork: ") + std::strerror(errno));
      if (n > 0) {
        int status = 0;
        while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
        }
        throw Error(ErrorCode::kInvalidArgument, program,
                    std::string("cannot start it: ") + std::strerror(child_errno));
      }
      r->pid = pid;
    } catch (...) {
      r->error = std::current_exception();
    }
    std::lock_guard lock(mutex_);
    r->done = true;
    wake_.notify_all();
  }
}

void kill_and_reap(pid_t pid) {
  if (pid <= 0) return;
  ::kill(pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
}

}  // namespace shardkit::shardify
