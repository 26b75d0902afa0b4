#include "core/remote/http_transport.h"

#include <strings.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <initializer_list>
#include <random>
#include <string_view>

#include "core/remote/curl_library.h"
#include "core/remote/redirects.h"

namespace shardkit::remote {
namespace {

size_t on_body(char* data, size_t bytes, HttpTransport::Sink& sink) {
  if (sink.grow) {
    if (sink.limit && sink.grow->size() + bytes > sink.limit) {
      sink.overflow = true;
      return 0;  // aborts the transfer: past the object's cap
    }
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

std::string trimmed(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return std::string(s);
}

std::string lowercase(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Whether a response's Content-Encoding (empty when absent; a comma-separated list) leaves the
// stored bytes as they are. `aws-chunked` names how an upload was sent, not how the object is
// stored: S3 drops it, and some S3-compatible stores keep it on intact objects.
bool identity_encoding(const std::string& encoding) {
  size_t at = 0;
  while (at <= encoding.size()) {
    const size_t comma = std::min(encoding.find(',', at), encoding.size());
    const std::string one = trimmed(std::string_view(encoding).substr(at, comma - at));
    if (!one.empty() && strcasecmp(one.c_str(), "identity") != 0 &&
        strcasecmp(one.c_str(), "aws-chunked") != 0)
      return false;
    at = comma + 1;
  }
  return true;
}

// Why a response with Content-Encoding is refused rather than decoded: ranges, sizes and
// checksums are all of the object's stored bytes, and a decoded range is not a range of them.
std::string encoded_response(const std::string& encoding) {
  return "the server sent the object with Content-Encoding: " + encoding +
         "; shardkit reads an object's stored bytes (by byte ranges), so it must be served "
         "without Content-Encoding (for S3: stored without Content-Encoding metadata)";
}

// A response's headers past this size are refused, whatever the libcurl version's own limits
// (100 KB a line; since 8.3, 300 KB in all): no real object store sends more than a few KB.
constexpr uint64_t kMaxHeaderBytes = 256 << 10;

// CURLE_TOO_LARGE, which libcurl 8.6 and later return for a header line over its limit where
// earlier versions return CURLE_OUT_OF_MEMORY; not in the headers of the libcurl built against.
constexpr int kCurlTooLarge = 100;

std::string headers_too_large_message(uint64_t received, const std::string& curl_said) {
  return "the server's response headers are too large: " + std::to_string(received) +
         " bytes of header lines received, and more came (one line over 100 KB, or over " +
         std::to_string(kMaxHeaderBytes >> 10) +
         " KiB in all, is refused; a misconfigured server or proxy)" +
         (curl_said.empty() ? "" : "; libcurl reported it as \"" + curl_said + "\"");
}

const char* const kNoRanges =
    "the server does not support range requests: it answered a Range request with HTTP 200 and "
    "the whole object. Remote datasets are read by byte ranges (nginx, S3 and most object stores "
    "serve them; python -m http.server does not)";

std::string other_range_message(uint64_t first, uint64_t bytes, const std::string& declared) {
  return "the server answered with bytes " + std::to_string(first) + ".." +
         std::to_string(first + bytes) + " instead (Content-Range: " + declared +
         "): a server or cache that sends another part of the object than the Range asked for; "
         "its bytes are not used";
}

std::string over_limit(const BodyLimit& limit, int64_t declared) {
  std::string s = declared >= 0 ? "the object is " + std::to_string(declared) + " bytes, over "
                                : "the object is larger than ";
  s += "the limit of " + std::to_string(limit.bytes) + " bytes";
  if (!limit.option.empty()) s += " (" + limit.option + "; raise it if the object is genuine)";
  return s;
}

struct Headers {
  curl_slist* list = nullptr;
  Headers() = default;
  Headers(const Headers&) = delete;
  ~Headers() {
    if (list) curl().slist_free_all(list);  // a list exists only once libcurl is open
  }
  void add(const std::string& h) { list = curl().slist_append(list, h.c_str()); }
};

// The file of an upload, opened afresh for each request (a retry, a 307).
struct UploadFile {
  FILE* f = nullptr;
  curl_off_t size = 0;
  explicit UploadFile(const std::string* path) {
    if (!path) return;
    f = std::fopen(path->c_str(), "rb");
    if (f && std::fseek(f, 0, SEEK_END) == 0) {
      size = std::ftell(f);
      std::rewind(f);
    } else if (f) {
      std::fclose(f);
      f = nullptr;
    }
  }
  ~UploadFile() {
    if (f) std::fclose(f);
  }
};

void set_transfer(CURL* h, const std::string& url, unsigned timeout_ms, bool head,
                  uint64_t max_bytes) {
  curl().easy_setopt(h, CURLOPT_URL, url.c_str());
  curl().easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  curl().easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, long{5000});
  curl().easy_setopt(h, CURLOPT_TIMEOUT_MS, static_cast<long>(timeout_ms));
  curl().easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
  curl().easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
  // Redirects are followed by the transport, one request at a time, to decide where
  // credentials go.
  curl().easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
  if (head) curl().easy_setopt(h, CURLOPT_NOBODY, 1L);
  if (max_bytes) curl().easy_setopt(h, CURLOPT_MAXFILESIZE_LARGE, curl_off_t(max_bytes));
}

void add_signature(CURL* h, const AwsSigning& signing, const std::vector<std::string>& extra,
                   bool upload, Headers& headers) {
  curl().easy_setopt(h, CURLOPT_AWS_SIGV4, ("aws:amz:" + signing.region + ":s3").c_str());
  curl().easy_setopt(h, CURLOPT_USERPWD, (signing.access_key + ":" + signing.secret_key).c_str());
  // The SHA-256 of the empty body of a GET or HEAD; curl 7.88 signs it but does not send it.
  // curl signs the value given here as the payload's hash.
  headers.add(upload ? "x-amz-content-sha256: UNSIGNED-PAYLOAD"
                     : "x-amz-content-sha256: "
                       "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  if (!signing.session_token.empty()) headers.add("x-amz-security-token: " + signing.session_token);
  for (const std::string& e : extra) headers.add(e);
}

void set_upload(CURL* h, const UploadFile& upload, unsigned timeout_ms, bool sign,
                Headers& headers) {
  // A whole shard may take longer than one request's timeout: an upload fails only when it
  // stalls (under 1 KB/s) for that long.
  curl().easy_setopt(h, CURLOPT_TIMEOUT_MS, 0L);
  curl().easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, 1024L);
  curl().easy_setopt(h, CURLOPT_LOW_SPEED_TIME, std::max(1L, static_cast<long>(timeout_ms / 1000)));
  curl().easy_setopt(h, CURLOPT_UPLOAD, 1L);
  curl().easy_setopt(h, CURLOPT_READDATA, upload.f);  // curl's default reader fread()s it
  curl().easy_setopt(h, CURLOPT_INFILESIZE_LARGE, upload.size);
  // No "Expect: 100-continue" round trip before each body. curl 7.88 signs a header removed
  // with "Expect:" although it is not sent (curl issue 11664), which AWS refuses: a signed
  // request keeps curl's own Expect header, unsigned, and does not wait for the 100.
  if (sign)
    curl().easy_setopt(h, CURLOPT_EXPECT_100_TIMEOUT_MS, 0L);
  else
    headers.add("Expect:");
}

}  // namespace

std::chrono::microseconds retry_backoff(unsigned retry, double jitter) {
  const double base_ms = std::min(2000.0, 50.0 * double(1u << std::min(retry, 10u)));
  return std::chrono::microseconds(int64_t(base_ms * jitter * 1000));
}

// One request's answer, filled in by curl's callbacks as it arrives, then after the transfer.
struct HttpTransport::Hop {
  CURLcode code = CURLE_OK;
  long status = 0;
  std::string location;  // where a redirect points
  std::string error_body;
  std::string curl_error;
  std::string local_error;  // the request could not be made (an unreadable upload)
  bool range_ignored = false;
  std::string content_encoding;    // of the last response's headers; empty when none
  bool encoded = false;            // a success whose Content-Encoding was not identity: refused
  curl_off_t content_length = -1;  // as declared
  std::optional<uint64_t> object_size;  // Content-Range's complete length, when declared
  std::optional<uint64_t> range_bytes;  // the length of Content-Range's span, when declared
  std::optional<uint64_t> range_first;  // and its first byte
  std::string content_range;            // as declared, for the message
  bool other_range = false;             // a 206 of bytes other than those asked for: refused
  curl_off_t uploaded = 0;
  // How far the response got, for the message when it broke off.
  bool request_sent = false;
  bool reused_connection = false;  // sent on a connection kept open from an earlier request
  bool status_line = false;
  bool headers_ended = false;  // the blank line after the last response's headers arrived
  bool headers_too_large = false;
  bool chunked = false;
  uint64_t header_bytes = 0;

  // Why the transfer failed, or its response broke off, as far as the server's part is known.
  struct Failure {
    std::string error;
    bool retry = false;
    bool new_connection = false;  // the retry goes on a connection of its own
  };

  // libcurl's code and its own words, for the message.
  std::string curl_said() const {
    if (code == CURLE_OK) return "";
    return std::string(curl().easy_strerror(code)) +
           (curl_error.empty() ? "" : " (" + curl_error + ")");
  }
  // Over kMaxHeaderBytes in all, or one line over libcurl's limit, which it reports as
  // running out of memory (CURLE_TOO_LARGE from 8.6 on).
  bool headers_over_limit() const {
    if (headers_too_large) return true;
    return !headers_ended && (code == CURLE_OUT_OF_MEMORY || int(code) == kCurlTooLarge);
  }
  // For a failed transfer, or one that ended before its headers did.
  Failure failure(bool overflow) const {
    const std::string said = curl_said();
    const std::string in_parens = said.empty() ? "" : " (" + said + ")";
    if (overflow) return {"the response is longer than the range asked for", true};
    if (request_sent && !status_line &&
        (code == CURLE_UNSUPPORTED_PROTOCOL || code == CURLE_WEIRD_SERVER_REPLY))
      return not_http(in_parens);
    if (status_line && !headers_ended)
      return {"the server closed the connection in the middle of its response headers, after " +
                  std::to_string(header_bytes) + " bytes of them" + in_parens,
              true};
    if (code == CURLE_OK)  // libcurl took a connection closed before any header for an answer
      return {"the server closed the connection before the end of its response headers", true};
    if (chunked && code == CURLE_RECV_ERROR)
      return {"the server's chunked response body broke off or is malformed" + in_parens, true};
    return {said, transient(code)};
  }
  // Bytes that are no status line where a response should begin. On a connection kept open,
  // they are most likely the rest of the response before, longer than its Content-Length said:
  // a new connection does not have them.
  Failure not_http(const std::string& in_parens) const {
    if (reused_connection)
      return {
          "the answer began with bytes that are no HTTP status line, on a connection kept "
          "open from an earlier request: most likely the end of the server's previous "
          "response, longer than its Content-Length" +
              in_parens,
          true, true};
    return {"the server's answer is not HTTP: it began with no status line" + in_parens, true,
            true};
  }

  // A 206 whose Content-Range declares bytes other than those asked for (a server or cache in
  // front of it that mixes up ranges): taken for the asked ones, its bytes would make an intact
  // shard look damaged. A range cut short at the object's declared end is the object's size,
  // which the size check names (a shard shorter than its manifest says).
  bool sends_other_range() const {
    if (!range_) return false;
    const auto& range = *range_;
    if (!range || status != 206 || !range_first) return false;
    if (*range_first != range->first) return true;
    const bool cut_at_object_end =
        object_size && *range_first + *range_bytes == *object_size && *range_bytes < range->second;
    return *range_bytes != range->second && !cut_at_object_end;
  }
  // Routes the response to this hop and `sink`.
  void listen(CURL* handle, const std::optional<std::pair<uint64_t, size_t>>& range, Sink& s) {
    h = handle;
    range_ = &range;
    sink = &s;
    sink->received = 0;
    sink->overflow = false;
    if (sink->grow) sink->grow->clear();
    curl().easy_setopt(h, CURLOPT_WRITEFUNCTION, on_write);
    curl().easy_setopt(h, CURLOPT_WRITEDATA, this);
    curl().easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
    curl().easy_setopt(h, CURLOPT_HEADERDATA, this);
  }

 private:
  CURL* h = nullptr;
  const std::optional<std::pair<uint64_t, size_t>>* range_ = nullptr;
  Sink* sink = nullptr;
  bool checked = false;

  // The body goes to the sink only for a success; an error page is kept apart for its reason.
  // A success with a Content-Encoding, and a 200 to a Range request (the whole object, but when
  // the range was the whole object), are refused at their first byte.
  static size_t on_write(char* data, size_t one, size_t n, void* user) {
    Hop& hop = *static_cast<Hop*>(user);
    if (!hop.checked) {
      hop.checked = true;
      curl().easy_getinfo(hop.h, CURLINFO_RESPONSE_CODE, &hop.status);
      if ((hop.status == 200 || hop.status == 206) && !identity_encoding(hop.content_encoding)) {
        hop.encoded = true;
        return 0;
      }
      const auto& range = *hop.range_;
      if (range && hop.status == 200 &&
          !(range->first == 0 && hop.content_length == curl_off_t(range->second))) {
        hop.range_ignored = true;
        return 0;
      }
      if (hop.sends_other_range()) {
        hop.other_range = true;
        return 0;
      }
    }
    if (hop.status == 200 || hop.status == 206) return on_body(data, one * n, *hop.sink);
    if (hop.error_body.size() < 4096) hop.error_body.append(data, one * n);
    return one * n;
  }
  // The declared size, for the message when it is over the limit (curl stops before the body),
  // and the object's size that a range's answer declares ("Content-Range: bytes 0-9/1234").
  static size_t on_header(char* data, size_t one, size_t n, void* user) {
    const std::string_view line(data, one * n);
    Hop& hop = *static_cast<Hop*>(user);
    hop.header_bytes += line.size();
    if (hop.header_bytes > kMaxHeaderBytes) {
      hop.headers_too_large = true;
      return 0;  // aborts the transfer
    }
    if (line.size() > 5 && strncasecmp(line.data(), "HTTP/", 5) == 0) {
      // A new response (after a 100 Continue): its own headers.
      hop.content_encoding.clear();
      hop.status_line = true;
      hop.headers_ended = false;
      hop.chunked = false;
    }
    if (line == "\r\n" || line == "\n") hop.headers_ended = true;
    if (line.size() > 18 && strncasecmp(line.data(), "transfer-encoding:", 18) == 0)
      hop.chunked = lowercase(line.substr(18)).find("chunked") != std::string::npos;
    if (line.size() > 17 && strncasecmp(line.data(), "content-encoding:", 17) == 0)
      hop.content_encoding = trimmed(line.substr(17)).substr(0, 100);
    if (line.size() > 15 && strncasecmp(line.data(), "content-length:", 15) == 0)
      hop.content_length = std::strtoll(line.data() + 15, nullptr, 10);
    if (line.size() > 14 && strncasecmp(line.data(), "content-range:", 14) == 0)
      hop.read_content_range(trimmed(line.substr(14)));
    return one * n;
  }
  // "bytes FIRST-LAST/SIZE", either side of the slash possibly "*".
  void read_content_range(const std::string& value) {
    content_range = value.substr(0, 100);
    unsigned long long first = 0, last = 0;
    if (std::sscanf(value.c_str(), "bytes %llu-%llu/", &first, &last) == 2 && last >= first) {
      range_first = first;
      range_bytes = last - first + 1;
    }
    const size_t slash = value.find('/');
    if (slash != std::string::npos && slash + 1 < value.size() &&
        std::isdigit(static_cast<unsigned char>(value[slash + 1])))
      object_size = std::strtoull(value.c_str() + slash + 1, nullptr, 10);
  }
};

struct HttpTransport::Attempt {
  bool ok = false;
  bool retry = false;
  bool new_connection = false;  // the retry goes on a connection of its own
  long status = 0;
  ErrorCode code = ErrorCode::kIo;
  std::string error;  // why it failed, for the message
};

HttpTransport::HttpTransport(const SourceOptions& options, std::optional<AwsSigning> signing)
    : options_(options),
      signing_(std::move(signing)),
      stop_(options.interrupt ? *options.interrupt : never_),
      pool_(options.remote_concurrency, stop_) {}

HttpTransport::~HttpTransport() = default;

HttpTransport::Hop HttpTransport::send(const std::string& url, bool sign, const Request& request,
                                       Sink& sink, bool urgent, const std::string& display) {
  Hop hop;
  const UploadFile upload(request.upload);
  if (request.upload && !upload.f) {
    hop.local_error = "cannot read " + *request.upload;
    return hop;
  }
  const CurlPool::Handle handle = pool_.take(urgent, display);
  CURL* h = static_cast<CURL*>(handle.easy);
  curl().easy_reset(h);  // keeps the handle's live connections
  char errbuf[CURL_ERROR_SIZE] = {0};
  curl().easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
  set_transfer(h, url, options_.remote_timeout_ms, request.head, sink.grow ? sink.limit : 0);
  Headers headers, routes;
  if (const auto& range = request.range)
    // A header rather than CURLOPT_RANGE, so that SigV4 signs it as S3 expects.
    headers.add("Range: bytes=" + std::to_string(range->first) + "-" +
                std::to_string(range->first + range->second - 1));
  if (sign) add_signature(h, *signing_, extra_headers_, upload.f != nullptr, headers);
  if (upload.f) set_upload(h, upload, options_.remote_timeout_ms, sign, headers);
  curl().easy_setopt(h, CURLOPT_HTTPHEADER, headers.list);
  for (const std::string& r : connect_to_) routes.add(r);
  if (routes.list) curl().easy_setopt(h, CURLOPT_CONNECT_TO, routes.list);
  if (request.new_connection) {
    // The kept connection may hold leftovers of an earlier response; this one is closed after
    // its answer, in case that answer leaves some too.
    curl().easy_setopt(h, CURLOPT_FRESH_CONNECT, 1L);
    curl().easy_setopt(h, CURLOPT_FORBID_REUSE, 1L);
  }
  hop.listen(h, request.range, sink);

  requests_.fetch_add(1, std::memory_order_relaxed);
  hop.code = static_cast<CURLcode>(pool_.perform(handle));
  curl().easy_getinfo(h, CURLINFO_RESPONSE_CODE, &hop.status);
  if (is_redirect(hop.status)) {
    char* location = nullptr;
    curl().easy_getinfo(h, CURLINFO_REDIRECT_URL, &location);
    if (location) hop.location = location;
  }
  hop.curl_error = errbuf;
  hop.uploaded = upload.size;
  long new_connections = 0, request_bytes = 0;
  curl().easy_getinfo(h, CURLINFO_NUM_CONNECTS, &new_connections);
  curl().easy_getinfo(h, CURLINFO_REQUEST_SIZE, &request_bytes);
  hop.request_sent = request_bytes > 0;
  hop.reused_connection = hop.request_sent && new_connections == 0;
  curl().easy_setopt(h, CURLOPT_ERRORBUFFER, nullptr);
  curl().easy_setopt(h, CURLOPT_HTTPHEADER, nullptr);
  curl().easy_setopt(h, CURLOPT_CONNECT_TO, nullptr);
  pool_.give(handle);
  return hop;
}

HttpTransport::Attempt HttpTransport::judge(const Hop& hop, const Request& request, Sink& sink,
                                            std::initializer_list<long> accepted) {
  Attempt a;
  a.status = hop.status;
  if (!hop.local_error.empty()) {
    a.error = hop.local_error;
    return a;
  }
  if (hop.encoded) {
    a.code = ErrorCode::kUnsupported;
    a.error = encoded_response(hop.content_encoding);
    return a;
  }
  if (hop.range_ignored) {
    ranges_unsupported_ = true;
    a.code = ErrorCode::kUnsupported;
    a.error = kNoRanges;
    return a;
  }
  if (hop.other_range || (hop.headers_ended && hop.sends_other_range())) {
    a.error = other_range_message(*hop.range_first, *hop.range_bytes, hop.content_range);
    return a;
  }
  if (sink.grow && sink.limit && (hop.code == CURLE_FILESIZE_EXCEEDED || sink.overflow)) {
    a.code = ErrorCode::kUnsupported;
    a.error = over_limit(*request.limit, hop.content_length);
    return a;
  }
  if (hop.headers_over_limit()) {
    // Another try would get the same headers. libcurl's words only where they were its own.
    a.error =
        headers_too_large_message(hop.header_bytes, hop.headers_too_large ? "" : hop.curl_said());
    return a;
  }
  if (hop.code != CURLE_OK || !hop.headers_ended) {
    const Hop::Failure f = hop.failure(sink.overflow);
    a.error = f.error;
    a.retry = f.retry;
    a.new_connection = f.new_connection;
    return a;
  }
  for (long ok : accepted)
    if (hop.status == ok) {
      a.ok = true;
      return a;
    }
  if (hop.status != 200 && hop.status != 206) {
    const std::string why = reason_in(hop.error_body);
    a.error = "HTTP " + std::to_string(hop.status) + (why.empty() ? "" : " " + why);
    if (hop.status == 403) a.error += ": access denied";
    if (hop.status == 404) a.error += ": not found";
    a.retry = hop.status >= 500 || hop.status == 429 || hop.status == 408;
    return a;
  }
  // An object of another size than the manifest's: another try would get the same.
  const std::optional<uint64_t> size =
      hop.status == 206 ? hop.object_size : std::optional<uint64_t>(sink.received);
  if (request.range && request.object_size && size && *size != *request.object_size) {
    a.code = ErrorCode::kCorrupt;
    a.error = "the object is " + std::to_string(*size) + " bytes, the manifest says " +
              std::to_string(*request.object_size) + " (truncated or replaced?)";
    return a;
  }
  if (request.range && sink.received != request.range->second) {
    a.retry = true;
    a.error = "short read: " + std::to_string(sink.received) + " of " +
              std::to_string(request.range->second) + " bytes";
    if (hop.range_bytes && hop.content_length >= 0 &&
        uint64_t(hop.content_length) < *hop.range_bytes) {
      a.error += ": the response's Content-Length (" + std::to_string(hop.content_length) +
                 ") is shorter than its Content-Range (" + std::to_string(*hop.range_bytes) +
                 " bytes)";
      a.new_connection = true;  // the rest may still come on this connection
    }
    return a;
  }
  bytes_.fetch_add(sink.received + static_cast<uint64_t>(hop.uploaded), std::memory_order_relaxed);
  a.ok = true;
  return a;
}

HttpTransport::Attempt HttpTransport::attempt(const std::string& url, const std::string& display,
                                              const Request& request, Sink& sink, bool urgent,
                                              std::initializer_list<long> accepted) {
  std::string at = url;
  for (int redirects = 0;; ++redirects) {
    // Credentials go only to the origin the request was made for.
    const bool sign = signing_.has_value() && (redirects == 0 || same_origin(url, at));
    const Hop hop = send(at, sign, request, sink, urgent, display);
    if (hop.code == CURLE_ABORTED_BY_CALLBACK) stop_.check(display);
    if (hop.code != CURLE_OK || !hop.headers_ended || !is_redirect(hop.status))
      return judge(hop, request, sink, accepted);
    Attempt a;
    a.status = hop.status;
    a.code = ErrorCode::kUnsupported;
    const std::string http = "HTTP " + std::to_string(hop.status) + " ";
    if (hop.location.empty()) {
      a.error = http + "redirect without a Location";
    } else if (!is_http_url(hop.location)) {
      a.error = http + "redirect to " + url_for_message(hop.location) +
                ", another scheme: only http:// and https:// redirects are followed";
    } else if (request.upload && !keeps_method(hop.status)) {
      a.error = http + "redirect of an upload (only 307 and 308 keep the body)";
    } else if (redirects == kMaxRedirects) {
      a.code = ErrorCode::kIo;
      a.error = "more than " + std::to_string(kMaxRedirects) + " redirects (the last to " +
                url_for_message(hop.location) + ")";
    } else {
      at = hop.location;
      continue;
    }
    return a;
  }
}

long HttpTransport::fetch(const std::string& url, const std::string& display,
                          const Request& request, Sink& sink, std::optional<uint64_t> block,
                          bool urgent, std::initializer_list<long> accepted) {
  thread_local std::mt19937_64 jitter(std::random_device{}());
  const auto& range = request.range;
  Request next = request;
  Attempt a;
  for (unsigned tries = 0;; ++tries) {
    a = attempt(url, display, next, sink, urgent, accepted);
    if (a.ok) return a.status;
    if (!a.retry || tries >= options_.remote_retries) break;
    next.new_connection = a.new_connection;
    retries_.fetch_add(1, std::memory_order_relaxed);
    stop_.sleep_for(retry_backoff(tries, std::uniform_real_distribution<double>(0.5, 1.0)(jitter)),
                    display);
  }
  std::string what = a.error;
  if (a.retry) what += " (after " + std::to_string(options_.remote_retries + 1) + " attempts)";
  if (range)
    what = "bytes " + std::to_string(range->first) + ".." +
           std::to_string(range->first + range->second) + ": " + what;
  throw Error(a.code, display, what, block);
}

std::string HttpTransport::get(const std::string& url, const std::string& display,
                               const BodyLimit& limit) {
  std::string body;
  Sink sink;
  sink.grow = &body;
  sink.limit = limit.bytes;
  Request request;
  request.limit = &limit;
  fetch(url, display, request, sink, std::nullopt, true);
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
                              bool urgent, std::optional<uint64_t> object_size) {
  if (size == 0) return;
  if (ranges_unsupported_) throw Error(ErrorCode::kUnsupported, display, kNoRanges, block);
  Sink sink;
  sink.out = out;
  sink.capacity = size;
  Request request;
  request.range = std::pair{offset, size};
  request.object_size = object_size;
  fetch(url, display, request, sink, block, urgent);
}

TransportStats HttpTransport::stats() const {
  return {requests_.load(), bytes_.load(), retries_.load()};
}

}  // namespace shardkit::remote
