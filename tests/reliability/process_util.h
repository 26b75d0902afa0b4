// Child processes for the crash-safety and concurrency tests: start a program, kill it at a
// chosen moment, wait for it.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

namespace shardkit::reliability {

// The staging directories (format/SPEC.md, "Writing a dataset safely") a killed writer of `out`
// left beside it.
inline std::vector<std::filesystem::path> staging_dirs(const std::filesystem::path& out) {
  std::vector<std::filesystem::path> found;
  const std::string prefix = "." + out.filename().string() + ".partial-";
  for (const auto& e : std::filesystem::directory_iterator(out.parent_path()))
    if (e.path().filename().string().rfind(prefix, 0) == 0) found.push_back(e.path());
  return found;
}

// Starts argv[0] with its output going to `log` (or /dev/null when empty). Everything the child
// needs is prepared before fork(): other threads of the test may hold the allocator's lock, so
// the child calls nothing but open, dup2 and execv.
inline pid_t spawn(const std::vector<std::string>& argv, const std::string& log = {}) {
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const char* out = log.empty() ? "/dev/null" : log.c_str();
  const pid_t pid = ::fork();
  if (pid != 0) return pid;
  const int fd = ::open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd >= 0) {
    ::dup2(fd, STDOUT_FILENO);
    ::dup2(fd, STDERR_FILENO);
  }
  ::execv(args[0], args.data());
  ::_exit(127);
}

// The wait status of `pid`.
inline int wait_for(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

struct RunResult {
  int status = 0;
  double seconds = 0;
  bool exited_ok() const { return WIFEXITED(status) && WEXITSTATUS(status) == 0; }
};

inline RunResult run_program(const std::vector<std::string>& argv, const std::string& log = {}) {
  const auto start = std::chrono::steady_clock::now();
  RunResult r;
  r.status = wait_for(spawn(argv, log));
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

// Starts the program, sends SIGKILL after `delay`, and returns whether the signal killed it (as
// opposed to the program having finished first).
inline bool kill_after(const std::vector<std::string>& argv, std::chrono::microseconds delay,
                       const std::string& log = {}) {
  const pid_t pid = spawn(argv, log);
  std::this_thread::sleep_for(delay);
  ::kill(pid, SIGKILL);
  const int status = wait_for(pid);
  return WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
}

}  // namespace shardkit::reliability
