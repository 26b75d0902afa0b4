// GETs of whole objects and byte ranges over HTTP(S) with libcurl: keep-alive connections reused
// from a pool of handles, at most `remote_concurrency` requests in flight, retries with
// exponential backoff and jitter on timeouts, connection failures, 5xx and short reads, and
// optional AWS SigV4 signing (CURLOPT_AWS_SIGV4 plus x-amz-content-sha256). Errors name the
// object as the caller displays it (a URL, never a credential).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "core/block_source.h"
#include "core/remote/aws_credentials.h"

namespace shardkit::remote {

struct TransportStats {
  uint64_t requests = 0;  // attempts, retries included
  uint64_t bytes = 0;     // body bytes received in successful responses
  uint64_t retries = 0;
};

class HttpTransport {
 public:
  HttpTransport(const SourceOptions& options, std::optional<AwsSigning> signing);
  ~HttpTransport();
  HttpTransport(const HttpTransport&) = delete;
  HttpTransport& operator=(const HttpTransport&) = delete;

  // The whole object. `display` names it in errors.
  std::string get(const std::string& url, const std::string& display);
  // Exactly `size` bytes at `offset` into `out`. A read someone waits for is `urgent`: it
  // takes the next free request slot before any prefetch does.
  void get_range(const std::string& url, const std::string& display, uint64_t offset, size_t size,
                 unsigned char* out, std::optional<uint64_t> block = {}, bool urgent = true);

  TransportStats stats() const;

  // Routes "HOST:PORT:CONNECT-HOST:CONNECT-PORT" (CURLOPT_CONNECT_TO), so that a test can send
  // a request for a public host name, signed for it, to a listener on 127.0.0.1.
  void set_connect_to(std::vector<std::string> routes) { connect_to_ = std::move(routes); }
  // Extra request headers (e.g. a fixed X-Amz-Date in the SigV4 test).
  void set_extra_headers(std::vector<std::string> headers) { extra_headers_ = std::move(headers); }

  struct Sink {
    unsigned char* out = nullptr;  // range target, or
    std::string* grow = nullptr;   // a whole object
    size_t capacity = 0;
    size_t received = 0;
    bool overflow = false;
  };

 private:
  struct Attempt;
  void fetch(const std::string& url, const std::string& display,
             std::optional<std::pair<uint64_t, size_t>> range, Sink& sink,
             std::optional<uint64_t> block, bool urgent);
  Attempt attempt(const std::string& url, std::optional<std::pair<uint64_t, size_t>> range,
                  Sink& sink, bool urgent);
  void* take_handle(bool urgent);
  void return_handle(void* handle);

  SourceOptions options_;
  std::optional<AwsSigning> signing_;
  std::vector<std::string> connect_to_;
  std::vector<std::string> extra_headers_;
  std::mutex mu_;
  std::condition_variable cv_;
  unsigned in_flight_ = 0;
  unsigned urgent_waiting_ = 0;
  std::vector<void*> idle_;  // CURL* handles keep their connections between requests
  std::atomic<uint64_t> requests_{0}, bytes_{0}, retries_{0};
};

}  // namespace shardkit::remote
