// Child processes that cannot outlive this one. Each child asks the kernel for SIGKILL when its
// parent goes (PR_SET_PDEATHSIG), so a shardify killed by SIGKILL, or ended by Ctrl-C, takes its
// chat template renderers with it instead of leaving them spinning.
//
// Linux sends that signal when the *thread* that forked the child ends, not the process: a child
// forked by a pool thread would die with that thread. So every child is forked by one thread of
// the launcher's own, which lives as long as the launcher.
#pragma once

#include <sys/types.h>

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace shardkit::shardify {

class TetheredLauncher {
 public:
  TetheredLauncher();
  // Ends the launching thread. Children still running are sent SIGKILL by the kernel then:
  // reap them first (kill_and_reap).
  ~TetheredLauncher();
  TetheredLauncher(const TetheredLauncher&) = delete;
  TetheredLauncher& operator=(const TetheredLauncher&) = delete;

  // Starts `argv` (argv[0] a path, or a name looked up in PATH) with `io` as its standard input
  // and output, an empty signal mask and SIGINT ignored (Ctrl-C reaches the parent, which ends
  // its children itself). Returns the child's pid. Throws Error(kInvalidArgument) naming the
  // program when it cannot be started.
  pid_t launch(const std::vector<std::string>& argv, int io);

 private:
  struct Request;
  void serve();

  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Request*> requests_;
  bool stopping_ = false;
  std::thread thread_;  // last: starts once the members above exist
};

// SIGKILL, then waitpid until the child is gone.
void kill_and_reap(pid_t pid);

}  // namespace shardkit::shardify
