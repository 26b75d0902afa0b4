#include "core/remote/per_process.h"

#include <pthread.h>

namespace shardkit::remote {
namespace {

// One more than the parent's: every descendant differs from each of its ancestors.
std::atomic<uint64_t> generation{0};

// Runs in the child, alone, before fork() returns there.
void on_fork_child() { generation.fetch_add(1); }

const int registered = pthread_atfork(nullptr, nullptr, on_fork_child);

}  // namespace

uint64_t process_generation() {
  (void)registered;
  return generation.load(std::memory_order_acquire);
}

}  // namespace shardkit::remote
