#include "shardify/read_ahead_source.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace shardkit::shardify {
namespace {

constexpr size_t kChunkBytes = 1 << 20;

class ReadAheadSource : public ByteSource {
 public:
  explicit ReadAheadSource(std::unique_ptr<ByteSource> inner)
      : inner_(std::move(inner)), decoder_([this] { decode(); }) {}

  ~ReadAheadSource() override {
    {
      std::lock_guard lock(mu_);
      stopping_ = true;
    }
    changed_.notify_all();
    decoder_.join();
  }

  size_t read(char* out, size_t size) override {
    std::unique_lock lock(mu_);
    changed_.wait(lock, [&] { return !ready_.empty() || finished_; });
    if (ready_.empty()) {
      if (error_) std::rethrow_exception(error_);
      return 0;
    }
    Chunk& front = ready_.front();
    const size_t n = std::min(size, front.size - front.taken);
    std::memcpy(out, front.data.get() + front.taken, n);
    front.taken += n;
    if (front.taken == front.size) {
      spare_.push_back(std::move(front.data));
      ready_.pop_front();
      lock.unlock();
      changed_.notify_all();
    }
    return n;
  }

  // Ahead of what read() handed out by the chunks decoded since: a progress figure.
  uint64_t file_bytes_consumed() const override { return consumed_.load(); }

  // Asked once read() threw: the decoding thread has returned by then (an error ends it), and
  // the lock that handed the error over orders what it wrote before.
  bool handed_out_damaged_text() const override {
    std::lock_guard lock(mu_);
    return finished_ && error_ && inner_->handed_out_damaged_text();
  }

 private:
  struct Chunk {
    std::unique_ptr<char[]> data;
    size_t size = 0;
    size_t taken = 0;
  };

  // Whole chunks, so that a reader's buffer is filled in few calls; the bytes before an error
  // are queued ahead of it.
  void decode() {
    for (;;) {
      std::unique_ptr<char[]> buffer;
      size_t filled = 0;
      std::exception_ptr error;
      try {
        buffer = take_spare();
        if (!buffer) return;  // stopping
        while (filled < kChunkBytes) {
          const size_t n = inner_->read(buffer.get() + filled, kChunkBytes - filled);
          if (n == 0) break;
          filled += n;
        }
      } catch (...) {
        error = std::current_exception();
      }
      consumed_.store(inner_->file_bytes_consumed());
      const bool end = error || filled < kChunkBytes;
      deliver(std::move(buffer), filled, end, error);
      if (end) return;
    }
  }

  // A buffer to decode into once fewer than kReadAheadChunks wait to be read; null if stopping.
  std::unique_ptr<char[]> take_spare() {
    std::unique_lock lock(mu_);
    changed_.wait(lock, [&] { return ready_.size() < kReadAheadChunks || stopping_; });
    if (stopping_) return nullptr;
    if (spare_.empty()) return std::unique_ptr<char[]>(new char[kChunkBytes]);
    std::unique_ptr<char[]> b = std::move(spare_.back());
    spare_.pop_back();
    return b;
  }

  void deliver(std::unique_ptr<char[]> data, size_t size, bool end, std::exception_ptr error) {
    {
      std::lock_guard lock(mu_);
      if (size) ready_.push_back(Chunk{std::move(data), size});
      if (end) {
        finished_ = true;
        error_ = std::move(error);
      }
    }
    changed_.notify_all();
  }

  std::unique_ptr<ByteSource> inner_;
  mutable std::mutex mu_;
  std::condition_variable changed_;
  std::deque<Chunk> ready_;
  std::vector<std::unique_ptr<char[]>> spare_;
  std::exception_ptr error_;
  bool finished_ = false;
  bool stopping_ = false;
  std::atomic<uint64_t> consumed_{0};
  std::thread decoder_;  // last: it starts once the members above are made
};

}  // namespace

bool worth_reading_ahead(const std::filesystem::path& path) {
  std::error_code ec;
  const uintmax_t size = std::filesystem::file_size(path, ec);
  return !ec && size >= (uintmax_t{1} << 20) && ByteSource::compressed(path);
}

std::unique_ptr<ByteSource> read_ahead(std::unique_ptr<ByteSource> inner) {
  return std::make_unique<ReadAheadSource>(std::move(inner));
}

}  // namespace shardkit::shardify
