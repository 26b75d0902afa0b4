#include "core/remote/http_transport.h"

#include <curl/curl.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <initializer_list>
#include <mutex>
#include <random>
#include <thread>

#include "core/error.h"

namespace shardkit::remote {
namespace {

std::once_flag curl_ready;

size_t on_body(char* data, size_t one, size_t n, void* user) {
  auto& sink = *static_cast<HttpTransport::Sink*>(user);
  const size_t bytes = one * n;
  if (sink.grow) {
    sink.grow->append(data, bytes);
  } else {
    if (sink.received + bytes > sink.capacity) {
      sink.overflow = true;
      return 0;  // aborts the transfer: a response longer than asked for is not believed
    }
    std::memcpy(sink.out + sink.received, data, bytes);
  }
  sink.received += bytes;
  return bytes;
}

// Transfer failures worth another try: the network or the server may recover.
bool transient(CURLcode code) {
  switch (code) {
    case CURLE_COULDNT_CONNECT:
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_OPERATION_TIMEDOUT:
    case CURLE_RECV_ERROR:
    case CURLE_SEND_ERROR:
    case CURLE_PARTIAL_FILE:
    case CURLE_GOT_NOTHING:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
    case CURLE_WEIRD_SERVER_REPLY:
    case CURLE_WRITE_ERROR:  // our sink refused an over-long body
    case CURLE_BAD_CONTENT_ENCODING:
      return true;
    default:
      return false;
  }
}

// S3 puts the reason in <Code>...</Code>; nginx in its <title>.
std::string reason_in(const std::string& body) {
  for (auto [open, close] : {std::pair{"<Code>", "</Code>"}, std::pair{"<title>", "</title>"}}) {
    const auto b = body.find(open);
    const auto e = body.find(close);
    if (b != std::string::npos && e != std::string::npos && e > b && e - b < 200)
      return body.substr(b + std::strlen(open), e - b - std::strlen(open));
  }
  return "";
}

}  // namespace

struct HttpTransport::Attempt {
  bool ok = false;
  bool retry = false;
  long status = 0;
  std::string error;  // why it failed, for the message
};

HttpTransport::HttpTransport(const SourceOptions& options, std::optional<AwsSigning> signing)
    : options_(options), signing_(std::move(signing)) {
  std::call_once(curl_ready, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
  if (options_.remote_concurrency == 0) options_.remote_concurrency = 1;
}

HttpTransport::~HttpTransport() {
  for (void* h : idle_) curl_easy_cleanup(static_cast<CURL*>(h));
}

void* HttpTransport::take_handle(bool urgent) {
  std::unique_lock lock(mu_);
  if (urgent) ++urgent_waiting_;
  cv_.wait(lock, [&] {
    return in_flight_ < options_.remote_concurrency && (urgent || urgent_waiting_ == 0);
  });
  if (urgent) --urgent_waiting_;
  ++in_flight_;
  if (!idle_.empty()) {
    void* h = idle_.back();
    idle_.pop_back();
    return h;
  }
  lock.unlock();
  return curl_easy_init();
}

void HttpTransport::return_handle(void* handle) {
  {
    std::lock_guard lock(mu_);
    --in_flight_;
    idle_.push_back(handle);
  }
  cv_.notify_all();  // an urgent waiter must not sleep through a prefetch's wake-up
}

HttpTransport::Attempt HttpTransport::attempt(const std::string& url, const Request& request,
                                              Sink& sink, bool urgent,
                                              std::initializer_list<long> accepted) {
  const auto& range = request.range;
  // An upload is read from its file afresh on every attempt.
  FILE* upload = nullptr;
  curl_off_t upload_size = 0;
  if (request.upload) {
    upload = std::fopen(request.upload->c_str(), "rb");
    if (!upload || std::fseek(upload, 0, SEEK_END) != 0) {
      if (upload) std::fclose(upload);
      Attempt a;
      a.error = "cannot read " + *request.upload;
      return a;
    }
    upload_size = std::ftell(upload);
    std::rewind(upload);
  }
  CURL* h = static_cast<CURL*>(take_handle(urgent));
  curl_easy_reset(h);  // keeps the handle's live connections
  char errbuf[CURL_ERROR_SIZE] = {0};
  std::string error_body;
  curl_slist* headers = nullptr;
  std::string range_header;
  if (range) {
    // A header rather than CURLOPT_RANGE, so that SigV4 signs it as S3 expects.
    range_header = "Range: bytes=" + std::to_string(range->first) + "-" +
                   std::to_string(range->first + range->second - 1);
    headers = curl_slist_append(headers, range_header.c_str());
  }
  std::string userpwd, sigv4, token;
  if (signing_) {
    sigv4 = "aws:amz:" + signing_->region + ":s3";
    userpwd = signing_->access_key + ":" + signing_->secret_key;
    curl_easy_setopt(h, CURLOPT_AWS_SIGV4, sigv4.c_str());
    curl_easy_setopt(h, CURLOPT_USERPWD, userpwd.c_str());
    // The SHA-256 of the empty body of a GET or HEAD; curl 7.88 signs it but does not send it.
    // curl signs the value given here as the payload's hash.
    headers = curl_slist_append(
        headers, upload ? "x-amz-content-sha256: UNSIGNED-PAYLOAD"
                        : "x-amz-content-sha256: "
                          "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    if (!signing_->session_token.empty()) {
      token = "x-amz-security-token: " + signing_->session_token;
      headers = curl_slist_append(headers, token.c_str());
    }
  }
  for (const std::string& extra : extra_headers_)
    headers = curl_slist_append(headers, extra.c_str());
  curl_slist* routes = nullptr;
  for (const std::string& r : connect_to_) routes = curl_slist_append(routes, r.c_str());
  if (routes) curl_easy_setopt(h, CURLOPT_CONNECT_TO, routes);
  curl_easy_setopt(h, CURLOPT_URL, url.c_str());
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
  curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, long{5000});
  curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, static_cast<long>(options_.remote_timeout_ms));
  curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
  curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
  if (request.head) curl_easy_setopt(h, CURLOPT_NOBODY, 1L);
  if (upload) {
    // A whole shard may take longer than one request's timeout: an upload fails only when it
    // stalls (under 1 KB/s) for that long.
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, 0L);
    curl_easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, 1024L);
    curl_easy_setopt(h, CURLOPT_LOW_SPEED_TIME,
                     std::max(1L, static_cast<long>(options_.remote_timeout_ms / 1000)));
    curl_easy_setopt(h, CURLOPT_UPLOAD, 1L);
    curl_easy_setopt(h, CURLOPT_READDATA, upload);  // curl's default reader fread()s it
    curl_easy_setopt(h, CURLOPT_INFILESIZE_LARGE, upload_size);
    // No "Expect: 100-continue" round trip before each body.
    headers = curl_slist_append(headers, "Expect:");
  }

  // The body goes to the sink only for a success; an error page is kept apart for its reason.
  struct Routing {
    Sink* sink;
    std::string* error_body;
    long status = 0;
    CURL* h;
  } routing{&sink, &error_body, 0, h};
  auto write = +[](char* data, size_t one, size_t n, void* user) -> size_t {
    auto& r = *static_cast<Routing*>(user);
    if (r.status == 0) curl_easy_getinfo(r.h, CURLINFO_RESPONSE_CODE, &r.status);
    if (r.status == 200 || r.status == 206) return on_body(data, one, n, r.sink);
    if (r.error_body->size() < 4096) r.error_body->append(data, one * n);
    return one * n;
  };
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, write);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, &routing);
  sink.received = 0;
  sink.overflow = false;
  if (sink.grow) sink.grow->clear();

  requests_.fetch_add(1, std::memory_order_relaxed);
  const CURLcode code = curl_easy_perform(h);
  long status = 0;
  curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
  curl_easy_setopt(h, CURLOPT_ERRORBUFFER, nullptr);
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, nullptr);
  curl_easy_setopt(h, CURLOPT_CONNECT_TO, nullptr);
  curl_slist_free_all(headers);
  curl_slist_free_all(routes);
  return_handle(h);
  if (upload) std::fclose(upload);

  Attempt a;
  a.status = status;
  if (code != CURLE_OK && !(code == CURLE_WRITE_ERROR && !sink.overflow)) {
    a.retry = transient(code);
    a.error = sink.overflow ? "the response is longer than the range asked for"
                            : std::string(curl_easy_strerror(code)) +
                                  (errbuf[0] ? std::string(" (") + errbuf + ")" : "");
    return a;
  }
  for (long ok : accepted)
    if (status == ok) {
      a.ok = true;
      return a;
    }
  if (status != 200 && status != 206) {
    const std::string why = reason_in(error_body);
    a.error = "HTTP " + std::to_string(status) + (why.empty() ? "" : " " + why);
    if (status == 403) a.error += ": access denied";
    if (status == 404) a.error += ": not found";
    a.retry = status >= 500 || status == 429 || status == 408;
    return a;
  }
  if (range) {
    if (status == 200) {
      a.error = "the server ignored the byte range (HTTP 200 instead of 206)";
      return a;
    }
    if (sink.received != range->second) {
      a.retry = true;
      a.error = "short read: " + std::to_string(sink.received) + " of " +
                std::to_string(range->second) + " bytes";
      return a;
    }
  }
  bytes_.fetch_add(sink.received + static_cast<uint64_t>(upload_size), std::memory_order_relaxed);
  a.ok = true;
  return a;
}

long HttpTransport::fetch(const std::string& url, const std::string& display,
                          const Request& request, Sink& sink, std::optional<uint64_t> block,
                          bool urgent, std::initializer_list<long> accepted) {
  thread_local std::mt19937_64 jitter(std::random_device{}());
  const auto& range = request.range;
  Attempt a;
  for (unsigned tries = 0;; ++tries) {
    a = attempt(url, request, sink, urgent, accepted);
    if (a.ok) return a.status;
    if (!a.retry || tries >= options_.remote_retries) break;
    retries_.fetch_add(1, std::memory_order_relaxed);
    // Exponential backoff with jitter: 50 ms, 100 ms, ... capped at 2 s, each scaled by a
    // random factor in [0.5, 1) so that many readers do not retry in lockstep.
    const double base = std::min(2000.0, 50.0 * double(1u << std::min(tries, 10u)));
    std::uniform_real_distribution<double> f(0.5, 1.0);
    std::this_thread::sleep_for(std::chrono::microseconds(int64_t(base * f(jitter) * 1000)));
  }
  std::string what = a.error;
  if (a.retry) what += " (after " + std::to_string(options_.remote_retries + 1) + " attempts)";
  if (range)
    what = "bytes " + std::to_string(range->first) + ".." +
           std::to_string(range->first + range->second) + ": " + what;
  throw Error(ErrorCode::kIo, display, what, block);
}

std::string HttpTransport::get(const std::string& url, const std::string& display) {
  std::string body;
  Sink sink;
  sink.grow = &body;
  fetch(url, display, Request{}, sink, std::nullopt, true);
  return body;
}

bool HttpTransport::exists(const std::string& url, const std::string& display) {
  std::string body;
  Sink sink;
  sink.grow = &body;
  Request head;
  head.head = true;
  return fetch(url, display, head, sink, std::nullopt, true, {404}) != 404;
}

void HttpTransport::put_file(const std::string& url, const std::string& display,
                             const std::string& path) {
  std::string body;  // the server's answer, unused
  Sink sink;
  sink.grow = &body;
  Request put;
  put.upload = &path;
  fetch(url, display, put, sink, std::nullopt, true);
}

void HttpTransport::get_range(const std::string& url, const std::string& display, uint64_t offset,
                              size_t size, unsigned char* out, std::optional<uint64_t> block,
                              bool urgent) {
  if (size == 0) return;
  Sink sink;
  sink.out = out;
  sink.capacity = size;
  Request request;
  request.range = std::pair{offset, size};
  fetch(url, display, request, sink, block, urgent);
}

TransportStats HttpTransport::stats() const {
  return {requests_.load(), bytes_.load(), retries_.load()};
}

}  // namespace shardkit::remote
