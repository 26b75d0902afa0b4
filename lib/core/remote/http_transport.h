// GETs of whole objects and byte ranges, HEADs and PUTs of files over HTTP(S) with libcurl:
// keep-alive connections reused from a pool of handles, at most `remote_concurrency` requests in
// flight, retries with exponential backoff and jitter on timeouts, connection failures, 5xx and
// short reads, and optional AWS SigV4 signing (CURLOPT_AWS_SIGV4 plus x-amz-content-sha256). Errors
// name the object as the caller displays it (a URL, never a credential).
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

  // Whether the object exists: true for 200, false for 404, an Error for anything else.
  bool exists(const std::string& url, const std::string& display);
  // Uploads the file at `path` (one PUT, streamed from disk, re-read on each retry). Signed
  // requests carry x-amz-content-sha256: UNSIGNED-PAYLOAD: hashing every byte beforehand would
  // need a SHA-256 library besides libcurl, and readers check every block's checksum anyway.
  void put_file(const std::string& url, const std::string& display, const std::string& path);

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
  // What to send besides a GET of the whole object.
  struct Request {
    std::optional<std::pair<uint64_t, size_t>> range;  // GET of a byte range
    bool head = false;                                 // HEAD: is it there?
    const std::string* upload = nullptr;               // PUT of this file
  };
  // Returns the HTTP status of the final attempt; throws after the last retry fails, except
  // for the statuses in `accepted` besides 200/206 (a HEAD's 404).
  long fetch(const std::string& url, const std::string& display, const Request& request, Sink& sink,
             std::optional<uint64_t> block, bool urgent, std::initializer_list<long> accepted = {});
  Attempt attempt(const std::string& url, const Request& request, Sink& sink, bool urgent,
                  std::initializer_list<long> accepted);
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
