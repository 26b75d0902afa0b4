// Retries and their backoff as README documents them ("Remote datasets", Failures), against a
// real server on 127.0.0.1 (tests/servers/fault_server.py) that fails a chosen number of times
// and logs when each request arrives: attempts are counted by the server, the waits between
// them measured on its clock.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>

#include "core/error.h"
#include "core/remote/http_transport.h"
#include "servers.h"
#include "test_util.h"

using namespace shardkit;
using shardkit::testing::TempDir;
namespace fs = std::filesystem;
namespace t = shardkit::testing;

namespace {

// A 64 KiB object, under each of `names`, served by a fault server with `rules`.
struct Served {
  TempDir tmp{"retry"};
  std::string bytes;
  std::unique_ptr<t::FaultServer> server;
  explicit Served(std::vector<std::string> rules, std::vector<std::string> names = {"obj"}) {
    for (int i = 0; i < 65536; ++i) bytes.push_back(char(i * 7 % 251));
    fs::create_directories(tmp / "www");
    for (const std::string& name : names) t::write_file(tmp / "www" / name, bytes);
    server = std::make_unique<t::FaultServer>(tmp / "server",
                                              t::FaultServer::Options{tmp / "www", 0, rules, {}});
  }
};

SourceOptions with_retries(unsigned retries, unsigned timeout_ms = 5000) {
  SourceOptions o;
  o.remote_retries = retries;
  o.remote_timeout_ms = timeout_ms;
  return o;
}

std::string fail_times(int n, int status = 503) {
  return R"({"path": "^/obj$", "fail": )" + std::to_string(n) + R"(, "status": )" +
         std::to_string(status) + "}";
}

// The message of the Error that reading `size` bytes at `offset` of `name` throws.
std::string range_error(remote::HttpTransport& transport, const Served& s, const std::string& name,
                        uint64_t offset = 0, size_t size = 100) {
  std::vector<unsigned char> out(size);
  try {
    transport.get_range(s.server->url(name), s.server->url(name), offset, size, out.data());
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

// Reads `size` bytes at `offset` of `name`, which must equal the object's.
void check_range(remote::HttpTransport& transport, const Served& s, const std::string& name,
                 uint64_t offset, size_t size) {
  std::vector<unsigned char> out(size);
  transport.get_range(s.server->url(name), name, offset, size, out.data());
  CHECK(std::string(out.begin(), out.end()) == s.bytes.substr(offset, size));
}

}  // namespace

TEST_CASE("a server failing 8 times: 9 attempts, 50 ms doubling to 2 s, each times [0.5, 1)") {
  Served s({fail_times(8)});
  remote::HttpTransport transport(with_retries(8), std::nullopt);
  std::vector<unsigned char> out(4096);
  transport.get_range(s.server->url("obj"), "obj", 1000, out.size(), out.data());
  CHECK(std::string(out.begin(), out.end()) == s.bytes.substr(1000, 4096));
  const auto got = s.server->requests("/obj");
  REQUIRE(got.size() == 9);
  CHECK(transport.stats().retries == 8);
  CHECK(transport.stats().requests == 9);
  for (size_t k = 0; k + 1 < got.size(); ++k) {
    const double base = std::min(2.0, 0.05 * double(1u << k));
    const double gap = got[k + 1].time - got[k].time;
    MESSAGE("wait before retry " << k + 1 << ": " << gap * 1000 << " ms (documented " << base * 500
                                 << "-" << base * 1000 << " ms)");
    CHECK(gap >= 0.5 * base - 0.002);
    // Upper side: the wait plus one request's round trip on a busy machine.
    CHECK(gap <= base + 0.25);
  }
  CHECK(got.back().action == "serve");
}

TEST_CASE("past remote_retries the read fails naming the status and the attempts, no more sent") {
  Served s({fail_times(100)});
  remote::HttpTransport transport(with_retries(3), std::nullopt);
  std::vector<unsigned char> out(100);
  try {
    transport.get_range(s.server->url("obj"), "obj", 0, out.size(), out.data(), 7);
    FAIL("a failing server was believed");
  } catch (const Error& e) {
    CHECK(e.code() == ErrorCode::kIo);
    CHECK(e.block() == 7);
    CHECK(std::string(e.what()).find("HTTP 503 SlowDown (after 4 attempts)") != std::string::npos);
  }
  CHECK(s.server->requests("/obj").size() == 4);
}

TEST_CASE("a request that times out is retried; 404 and 403 are not") {
  Served s({R"({"path": "^/slow$", "stall": true})", fail_times(100, 403)});
  remote::HttpTransport transport(with_retries(2, 300), std::nullopt);
  std::vector<unsigned char> out(100);
  CHECK_THROWS_WITH_AS(transport.get_range(s.server->url("slow"), "slow", 0, 100, out.data()),
                       doctest::Contains("Timeout was reached"), Error);
  CHECK(s.server->requests("/slow").size() == 3);
  CHECK_THROWS_WITH_AS(transport.get(s.server->url("missing"), "missing"),
                       doctest::Contains("HTTP 404"), Error);
  CHECK(s.server->requests("/missing").size() == 1);
  CHECK_THROWS_WITH_AS(transport.get(s.server->url("obj"), "obj"), doctest::Contains("HTTP 403"),
                       Error);
  CHECK(s.server->requests("/obj").size() == 1);
}

TEST_CASE("responses broken off in their headers, not HTTP, or badly chunked: named and retried") {
  // Before: a connection closed after the status line was a read of 0 bytes (a whole object:
  // an empty one); without the headers' end, "Transferred a partial file"; a bad chunk size,
  // "Failure when receiving data from the peer"; no status line, "Unsupported protocol", not
  // retried.
  Served s({R"({"path": "^/cut$", "cut_headers": true})",
            R"({"path": "^/noend$", "no_headers_end": true})",
            R"({"path": "^/chunk$", "bad_chunked": true})",
            R"({"path": "^/nothttp$", "not_http": true})",
            R"({"path": "^/cut_twice$", "cut_headers": true, "times": 2})"},
           {"cut", "noend", "chunk", "nothttp", "cut_twice"});
  const std::pair<std::string, std::string> cases[] = {
      {"cut", "the server closed the connection in the middle of its response headers"},
      {"noend", "the server closed the connection in the middle of its response headers"},
      {"chunk", "the server's chunked response body broke off or is malformed"},
      {"nothttp", "the server's answer is not HTTP: it began with no status line"}};
  for (const auto& [name, what] : cases) {
    remote::HttpTransport transport(with_retries(2), std::nullopt);
    const std::string message = range_error(transport, s, name);
    INFO(name, ": ", message);
    CHECK(message.rfind(s.server->url(name) + ": bytes 0..100: " + what, 0) == 0);
    CHECK(message.find("(after 3 attempts)") != std::string::npos);
    CHECK(s.server->requests("/" + name).size() == 3);
  }
  remote::HttpTransport transport(with_retries(2), std::nullopt);
  CHECK_THROWS_WITH_AS(transport.get(s.server->url("cut"), "cut"),
                       doctest::Contains("in the middle of its response headers"), Error);
  check_range(transport, s, "cut_twice", 1000, 4096);
  CHECK(s.server->requests("/cut_twice").size() == 3);
}

TEST_CASE("bytes past a response's Content-Length on a kept connection: retried on a new one") {
  // The server writes 20 bytes more than its Content-Length, 500 ms after the response: the
  // next request on that connection reads them where its status line should be. Before:
  // "Unsupported protocol (Received HTTP/0.9 when not allowed)", not retried.
  Served s({R"({"path": "^/extra$", "extra": 20, "extra_delay_ms": 500})"}, {"extra"});
  remote::HttpTransport transport(with_retries(3), std::nullopt);
  for (uint64_t offset : {0, 4096, 8192, 12288}) check_range(transport, s, "extra", offset, 4096);
  // Reads 2 and 4 met the leftovers; the retry's connection is not kept, so read 3 was not.
  CHECK(transport.stats().retries == 2);
  CHECK(s.server->requests("/extra").size() == 6);

  // Without retries, the message says what the server did.
  remote::HttpTransport once(with_retries(0), std::nullopt);
  check_range(once, s, "extra", 0, 4096);
  const std::string message = range_error(once, s, "extra", 4096, 4096);
  INFO(message);
  CHECK(message.find(s.server->url("extra") + ": bytes 4096..8192: the answer began with bytes "
                                              "that are no HTTP status line, on a connection "
                                              "kept open from an earlier request: most likely "
                                              "the end of the server's previous response, longer "
                                              "than its Content-Length") == 0);
}

TEST_CASE("a Content-Length shorter than the range sent: named; sent once, then the right bytes") {
  // Before: the 10 bytes past the Content-Length met the retry on the same connection:
  // "Unsupported protocol (Received HTTP/0.9 when not allowed)", not retried.
  Served s({R"({"path": "^/short$", "short_length": 10})",
            R"({"path": "^/once$", "short_length": 10, "times": 1})"},
           {"short", "once"});
  remote::HttpTransport transport(with_retries(3), std::nullopt);
  const std::string message = range_error(transport, s, "short", 0, 4096);
  INFO(message);
  CHECK(message.find("short read: 4086 of 4096 bytes: the response's Content-Length (4086) is "
                     "shorter than its Content-Range (4096 bytes) (after 4 attempts)") !=
        std::string::npos);
  CHECK(s.server->requests("/short").size() == 4);
  check_range(transport, s, "once", 4096, 4096);
  CHECK(s.server->requests("/once").size() == 2);
}
