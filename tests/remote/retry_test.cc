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

// A 64 KiB object served by a fault server with `rules`.
struct Served {
  TempDir tmp{"retry"};
  std::string bytes;
  std::unique_ptr<t::FaultServer> server;
  explicit Served(std::vector<std::string> rules) {
    for (int i = 0; i < 65536; ++i) bytes.push_back(char(i * 7 % 251));
    fs::create_directories(tmp / "www");
    t::write_file(tmp / "www" / "obj", bytes);
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
