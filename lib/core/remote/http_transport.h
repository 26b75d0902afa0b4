// GETs of whole objects and byte ranges, HEADs and PUTs of files over HTTP(S) with libcurl:
// keep-alive connections reused from a pool of handles (curl_pool.h), at most
// `remote_concurrency` requests in flight, redirects followed within http(s) (redirects.h),
// retries with exponential backoff and jitter on timeouts, connection failures, 5xx and short
// reads, and optional AWS SigV4 signing (CURLOPT_AWS_SIGV4 plus x-amz-content-sha256). Every
// wait watches SourceOptions::interrupt. Errors name the object as the caller displays it (a
// URL, never a credential), and say what the server did where libcurl's words would mislead:
// headers broken off, an answer that is not HTTP, a malformed chunked body. An answer that
// begins with stray bytes on a kept connection (most likely the end of the response before,
// longer than its Content-Length), or whose Content-Length falls short of its Content-Range,
// is retried on a new connection, which is not kept after it.
//
// What is not retried, because another try would get the same answer: 4xx but 408 and 429, a
// server that answers a Range request with the whole object (it does not support ranges: every
// later range request of the transport fails at once, without a request), a 206 whose
// Content-Range names other bytes than those asked for (a cache that mixes up ranges: its bytes
// would pass for the asked ones and make an intact shard look damaged), a success sent with
// a Content-Encoding other than identity (gzip of an object stored with that metadata: its
// ranges and checksums are of the stored bytes, which shardkit does not decode), a body over its
// limit, response headers over 256 KiB (or a header line over libcurl's 100 KB, which libcurl
// 7.x reports as running out of memory), a redirect that cannot be followed.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/block_source.h"
#include "core/error.h"
#include "core/interrupt.h"
#include "core/remote/aws_credentials.h"
#include "core/remote/curl_pool.h"

namespace shardkit::remote {

struct TransportStats {
  uint64_t requests = 0;  // HTTP requests sent: retries and redirects included
  uint64_t bytes = 0;     // body bytes received in successful responses
  uint64_t retries = 0;
};

// The wait before retry `retry` (0 for the first): 50 ms doubled per retry up to 2 s, times
// `jitter` in [0.5, 1) so that many readers do not retry in lockstep.
std::chrono::microseconds retry_backoff(unsigned retry, double jitter);

// A cap on a whole object's size, and the option that sets it (for the message).
struct BodyLimit {
  uint64_t bytes = 0;  // 0: none
  std::string option;
};

class HttpTransport {
 public:
  HttpTransport(const SourceOptions& options, std::optional<AwsSigning> signing);
  ~HttpTransport();
  HttpTransport(const HttpTransport&) = delete;
  HttpTransport& operator=(const HttpTransport&) = delete;

  // The whole object. `display` names it in errors. Over `limit`, Error(kUnsupported) once the
  // size is known (from Content-Length, else as the bytes arrive), without a retry.
  std::string get(const std::string& url, const std::string& display, const BodyLimit& limit = {});
  // Exactly `size` bytes at `offset` into `out`. A read someone waits for is `urgent`: it
  // takes the next free request slot before any prefetch does. With `object_size`, an answer
  // whose Content-Range declares another size is Error(kCorrupt), without a retry.
  void get_range(const std::string& url, const std::string& display, uint64_t offset, size_t size,
                 unsigned char* out, std::optional<uint64_t> block = {}, bool urgent = true,
                 std::optional<uint64_t> object_size = {});

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
  // Extra request headers (e.g. a fixed X-Amz-Date in the SigV4 test), sent with the signed
  // headers: only to the request's own origin.
  void set_extra_headers(std::vector<std::string> headers) { extra_headers_ = std::move(headers); }

  struct Sink {
    unsigned char* out = nullptr;  // range target, or
    std::string* grow = nullptr;   // a whole object
    size_t capacity = 0;
    uint64_t limit = 0;  // grow: at most this many bytes (0: no limit)
    size_t received = 0;
    bool overflow = false;
  };

 private:
  struct Hop;
  struct Attempt;
  // What to send besides a GET of the whole object.
  struct Request {
    std::optional<std::pair<uint64_t, size_t>> range;  // GET of a byte range
    bool head = false;                                 // HEAD: is it there?
    const std::string* upload = nullptr;               // PUT of this file
    const BodyLimit* limit = nullptr;                  // a whole object's cap
    std::optional<uint64_t> object_size;               // the size a range's object must have
    bool new_connection = false;  // not on a kept connection, and none kept after it
  };
  // Returns the HTTP status of the final attempt; throws after the last retry fails, except
  // for the statuses in `accepted` besides 200/206 (a HEAD's 404).
  long fetch(const std::string& url, const std::string& display, const Request& request, Sink& sink,
             std::optional<uint64_t> block, bool urgent, std::initializer_list<long> accepted = {});
  // One try: the request and the redirects it leads to.
  Attempt attempt(const std::string& url, const std::string& display, const Request& request,
                  Sink& sink, bool urgent, std::initializer_list<long> accepted);
  Attempt judge(const Hop& hop, const Request& request, Sink& sink,
                std::initializer_list<long> accepted);
  // One HTTP request to `url`, signed (and with the extra headers) when `sign`.
  Hop send(const std::string& url, bool sign, const Request& request, Sink& sink, bool urgent,
           const std::string& display);

  SourceOptions options_;
  std::optional<AwsSigning> signing_;
  Interrupt never_;  // watched when options_.interrupt is empty
  const Interrupt& stop_;
  CurlPool pool_;
  std::vector<std::string> connect_to_;
  std::vector<std::string> extra_headers_;
  std::atomic<bool> ranges_unsupported_{false};
  std::atomic<uint64_t> requests_{0}, bytes_{0}, retries_{0};
};

}  // namespace shardkit::remote
