// Answers that another try would only repeat fail on the first one: a server that ignores Range
// (python -m http.server, which sent the whole shard 785 times in a row before) and a manifest
// over max_manifest_bytes (a 1 GiB one was read whole, twice, into 1.28 GB of memory), and a
// shard whose server never answers (each block read ahead tried it again, for minutes), an
// object sent with Content-Encoding (its ranges were retried as short reads), and response
// headers over libcurl's limits (reported as running out of memory, or retried).
#include <doctest/doctest.h>
#include <sys/resource.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <thread>

#include "core/dataset.h"
#include "core/error.h"
#include "core/remote/http_transport.h"
#include "core/verify.h"
#include "remote_test_util.h"
#include "servers.h"
#include "test_util.h"

using namespace shardkit;
using namespace shardkit::loader;
using shardkit::testing::TempDir;
namespace fs = std::filesystem;
namespace t = shardkit::testing;

namespace {

// python3 -m http.server (it answers every GET with the whole file) serving the fixture.
struct PythonHttpServer {
  TempDir tmp{"httpserver"};
  int port = t::free_port();
  t::ServerProcess process;
  PythonHttpServer() {
    t::write_remote_fixture(tmp / "www" / "ds");
    process.start({"/usr/bin/python3", "-m", "http.server", std::to_string(port), "--bind",
                   "127.0.0.1", "--directory", (tmp / "www").string()},
                  port, log().string());
  }
  fs::path log() const { return tmp / "http.server.log"; }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port) + "/ds"; }
  // GETs of shard files in its log.
  size_t shard_gets() const {
    size_t n = 0;
    for (const std::string& line : t::split_lines(t::read_file(log())))
      n += line.find("\"GET /ds/shard-") != std::string::npos;
    return n;
  }
};

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

uint64_t peak_rss_kb() {
  rusage u{};
  ::getrusage(RUSAGE_SELF, &u);
  return uint64_t(u.ru_maxrss);
}

}  // namespace

TEST_CASE("python -m http.server ignores Range: the first answer fails the read, without retries") {
  PythonHttpServer server;
  const Dataset ds = Dataset::open(server.url());  // the manifest is read whole: fine
  std::vector<unsigned char> record(ds.schema().record_size());
  const auto start = std::chrono::steady_clock::now();
  try {
    ds.read(0, record.data());
    FAIL("a server without range requests went unnoticed");
  } catch (const Error& e) {
    CHECK(e.code() == ErrorCode::kUnsupported);
    CHECK(e.file().rfind(server.url() + "/shard-", 0) == 0);
    CHECK(std::string(e.what()).find("the server does not support range requests") !=
          std::string::npos);
  }
  // The shard's header and its index were asked for at once; nothing after the first answer.
  const size_t gets = server.shard_gets();
  MESSAGE("Dataset: " << gets << " shard GETs, failed after " << seconds_since(start) << " s");
  CHECK(gets >= 1);
  CHECK(gets <= 2);

  // A loader asks for many blocks ahead at once: one answer each at most, then none.
  LoaderOptions o = t::remote_options();
  Loader loader(server.url(), o);
  const size_t before = server.shard_gets();
  CHECK_THROWS_WITH_AS(loader.next(), doctest::Contains("does not support range requests"), Error);
  const size_t loader_gets = server.shard_gets() - before;
  MESSAGE("Loader: " << loader_gets << " shard GETs");
  CHECK(loader_gets <= o.source.remote_concurrency + 2);
}

TEST_CASE("a Range request covering the whole object may be answered with 200") {
  PythonHttpServer server;
  const std::string manifest = t::read_file(server.tmp / "www" / "ds" / "manifest.json");
  remote::HttpTransport transport(SourceOptions{}, std::nullopt);
  std::string out(manifest.size(), '\0');
  transport.get_range(server.url() + "/manifest.json", "manifest.json", 0, out.size(),
                      reinterpret_cast<unsigned char*>(out.data()));
  CHECK(out == manifest);
}

TEST_CASE("a manifest over max_manifest_bytes is refused once, before its body is read") {
  TempDir tmp("bigmanifest");
  fs::create_directories(tmp / "www" / "big");
  {
    // 300 MiB, sparse: nginx sends its Content-Length first.
    t::write_file(tmp / "www" / "big" / "manifest.json", "{");
    fs::resize_file(tmp / "www" / "big" / "manifest.json", 300ull << 20);
  }
  t::write_remote_fixture(tmp / "www" / "ds");
  t::Nginx nginx(tmp / "www", tmp / "nginx");
  const uint64_t rss_before = peak_rss_kb();
  const auto start = std::chrono::steady_clock::now();
  try {
    Dataset::open(nginx.url("big"));
    FAIL("a 300 MiB manifest was read");
  } catch (const Error& e) {
    CHECK(e.code() == ErrorCode::kUnsupported);
    CHECK(e.file() == nginx.url("big/manifest.json"));
    CHECK(std::string(e.what()).find("the object is 314572800 bytes, over the limit of 268435456 "
                                     "bytes (max_manifest_bytes") != std::string::npos);
  }
  MESSAGE("refused after " << seconds_since(start) << " s; peak RSS grew by "
                           << (peak_rss_kb() - rss_before) / 1024 << " MiB");
  // nginx logs a request when it ends: here when it finds the connection closed.
  CHECK(nginx.logged_requests("/big/manifest.json", 1) == 1);
  CHECK(peak_rss_kb() - rss_before < 64 * 1024);

  // A lower limit, set by the option, for the fixture's own manifest (a few KB).
  const uint64_t size = fs::file_size(tmp / "www" / "ds" / "manifest.json");
  DatasetOptions o;
  o.source.max_manifest_bytes = size - 1;
  CHECK_THROWS_WITH_AS(Dataset::open(nginx.url("ds"), o),
                       doctest::Contains(("over the limit of " + std::to_string(size - 1)).c_str()),
                       Error);
  o.source.max_manifest_bytes = size;
  CHECK(Dataset::open(nginx.url("ds"), o).size() == 20000);
  CHECK(nginx.logged_requests("/ds/manifest.json", 2) == 2);
}

TEST_CASE("a manifest sent without its size is cut off at max_manifest_bytes") {
  TempDir tmp("nolength");
  t::write_remote_fixture(tmp / "www" / "ds");
  t::FaultServer server(tmp / "server",
                        {tmp / "www", 0, {R"({"path": "manifest", "no_length": true})"}, {}});
  DatasetOptions o;
  o.source.max_manifest_bytes = 1000;
  CHECK_THROWS_WITH_AS(Dataset::open(server.url("ds"), o),
                       doctest::Contains("the object is larger than the limit of 1000 bytes "
                                         "(max_manifest_bytes"),
                       Error);
  CHECK(server.requests("manifest").size() == 1);
  o.source.max_manifest_bytes = 0;  // no limit
  CHECK(Dataset::open(server.url("ds"), o).size() == 20000);
}

TEST_CASE("a server that never answers for a shard: a loader fails after one request's retries") {
  // One shard of many blocks: before, every block the loader asked for ahead opened the shard
  // again with the whole retry budget (118 s with a 100 ms timeout and 348 blocks).
  TempDir tmp("stalled");
  t::write_fixture(tmp / "www" / "ds",
                   {.records = 20000, .block_bytes = 4096, .shard_bytes = 64 << 20});
  t::FaultServer server(tmp / "server",
                        {tmp / "www", 0, {R"({"path": "\\.shard$", "stall": true})"}, {}});
  loader::LoaderOptions o = t::remote_options();
  o.source.remote_retries = 1;
  o.source.remote_timeout_ms = 200;
  loader::Loader loader(server.url("ds"), o);
  const auto start = std::chrono::steady_clock::now();
  CHECK_THROWS_WITH_AS(loader.next(), doctest::Contains("Timeout was reached"), Error);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const size_t requests = server.requests(".shard").size();
  MESSAGE(requests << " shard requests, " << seconds << " s");
  // A few opens of the shard (the read-ahead's, each loader thread's; an open reads its header
  // and its index, each maybe asked for ahead too) of 2 attempts each, whatever the number of
  // blocks a window holds (284 requests and 38 s here before).
  CHECK(requests <= 4 * (o.threads + 1) * 2);
  CHECK(seconds < 6.0);

  // shard-inspect takes the same bounds as flags: without them this verify waits 6 x 30 s.
  std::string out;
  const auto cli_start = std::chrono::steady_clock::now();
  CHECK(t::run_command(t::tool_path("shard-inspect") + " verify " + server.url("ds") +
                           " --remote-timeout-ms 200 --remote-retries 1",
                       &out) != 0);
  CHECK_MESSAGE(out.find("Timeout was reached") != std::string::npos, out);
  CHECK(std::chrono::duration<double>(std::chrono::steady_clock::now() - cli_start).count() < 10.0);
}

TEST_CASE("a manifest or shard sent with Content-Encoding: gzip fails at once, naming both") {
  // As S3 serves an object uploaded with Content-Encoding metadata: its stored bytes
  // compressed. Before, the manifest failed its checksum line, and a shard's ranges were
  // retried 6 times as short reads.
  TempDir tmp("encoded");
  t::write_remote_fixture(tmp / "www" / "ds");
  t::FaultServer manifest(tmp / "manifest",
                          {tmp / "www", 0, {R"({"path": "manifest", "encoding": "gzip"})"}, {}});
  const std::string secret_query = "?token=QueryTokenSecret";
  try {
    Dataset::open(manifest.url("ds") + secret_query);
    FAIL("a gzip-encoded manifest was read");
  } catch (const Error& e) {
    const std::string message = e.what();
    INFO(message);
    CHECK(e.code() == ErrorCode::kUnsupported);
    CHECK(e.file() == manifest.url("ds/manifest.json") + "?***");
    CHECK(message.find("Content-Encoding: gzip") != std::string::npos);
    CHECK(message.find("must be served without Content-Encoding") != std::string::npos);
    CHECK(message.find("QueryTokenSecret") == std::string::npos);
  }
  CHECK(manifest.requests("manifest").size() == 1);

  t::FaultServer shards(tmp / "shards",
                        {tmp / "www", 0, {R"({"path": "\\.shard$", "encoding": "gzip"})"}, {}});
  SourceOptions o;
  o.remote_retries = 5;
  const VerifyReport report = verify_dataset(shards.url("ds"), o);
  REQUIRE_FALSE(report.ok());
  for (const VerifyFault& f : report.faults) {
    INFO(f.message);
    CHECK(f.file.rfind(shards.url("ds/shard-"), 0) == 0);
    CHECK(f.message.find("Content-Encoding: gzip") != std::string::npos);
    CHECK(f.message.find("attempts") == std::string::npos);
  }
  // No range retried (before: 6 attempts of each, 34 requests): at most a prefetch's request
  // and the read's own, which does not trust a failed prefetch.
  std::map<std::pair<std::string, std::string>, int> asked;
  for (const auto& r : shards.requests(".shard")) ++asked[{r.path, r.range}];
  MESSAGE(shards.requests(".shard").size()
          << " shard requests for " << report.faults.size() << " faults");
  for (const auto& [range, times] : asked) CHECK_MESSAGE(times <= 2, range.first, range.second);
  CHECK(asked.size() <= 2 * report.faults.size());

  // aws-chunked names how an upload was sent; some S3-compatible stores keep it on intact
  // objects, whose bytes are the stored ones: read as any other.
  t::FaultServer chunked(tmp / "chunked",
                         {tmp / "www", 0, {R"({"path": ".", "encoding": "aws-chunked"})"}, {}});
  CHECK(verify_dataset(chunked.url("ds"), SourceOptions{}).ok());
  CHECK(chunked.requests("manifest").size() == 1);
}

TEST_CASE("a Range answered with other bytes of the object is the server's fault, named at once") {
  // A cache in front of the server that answers bytes 7 earlier than asked, and says so in its
  // Content-Range. Before, those bytes were taken for the asked ones: verify blamed the intact
  // shards ("footer magic is not SHARDEND", checksum mismatches) after retrying each range.
  TempDir tmp("otherrange");
  t::write_remote_fixture(tmp / "www" / "ds");
  REQUIRE(verify_dataset((tmp / "www" / "ds").string(), SourceOptions{}).ok());
  t::FaultServer server(tmp / "server",
                        {tmp / "www", 0, {R"({"path": "\\.shard$", "shift_range": 7})"}, {}});
  SourceOptions o;
  o.remote_retries = 3;
  const VerifyReport report = verify_dataset(server.url("ds"), o);
  REQUIRE_FALSE(report.faults.empty());
  for (const VerifyFault& f : report.faults) {
    INFO(f.message);
    CHECK(f.file.rfind(server.url("ds/shard-"), 0) == 0);
    CHECK(f.message.find(" instead (Content-Range: bytes ") != std::string::npos);
    CHECK(f.message.find("another part of the object than the Range asked for") !=
          std::string::npos);
    CHECK(f.message.find("SHARDEND") == std::string::npos);
    CHECK(f.message.find("checksum") == std::string::npos);
  }
  // Named on the first answer: each range asked once by the read (and perhaps once ahead).
  std::map<std::pair<std::string, std::string>, int> asked;
  for (const auto& r : server.requests(".shard")) ++asked[{r.path, r.range}];
  for (const auto& [range, times] : asked) CHECK_MESSAGE(times <= 2, range.first, range.second);
  // A range from byte 0 cannot be shifted: the same server serves it right.
  remote::HttpTransport transport(o, std::nullopt);
  const std::string shard = t::read_file(tmp / "www" / "ds" / "shard-00000.shard");
  std::string head(64, '\0');
  transport.get_range(server.url("ds/shard-00000.shard"), "shard", 0, head.size(),
                      reinterpret_cast<unsigned char*>(head.data()));
  CHECK(head == shard.substr(0, 64));
}

TEST_CASE("shard-inspect report and verify --json read with the remote flags, the manifest once") {
  TempDir tmp("cliflags");
  t::write_remote_fixture(tmp / "www" / "ds");
  const std::string tool = "timeout 60 " + t::tool_path("shard-inspect");
  const std::string flags = " --remote-timeout-ms 200 --remote-retries 1 --progress never";
  {
    // A server that never answers: each command gives up after 2 attempts of 200 ms (before:
    // report loaded the manifest with the defaults, 6 attempts of 30 s).
    t::FaultServer stalled(tmp / "stalled",
                           {tmp / "www", 0, {R"({"path": ".", "stall": true})"}, {}});
    const std::string report = (tmp / "report.html").string();
    for (const std::string& cmd :
         {"report " + stalled.url("ds") + " -o " + report, "verify --json " + stalled.url("ds")}) {
      const size_t before = stalled.requests("manifest").size();
      std::string out;
      const auto start = std::chrono::steady_clock::now();
      CHECK(t::run_command(tool + " " + cmd + flags, &out) == 1);
      const double seconds = seconds_since(start);
      INFO(cmd, ": ", out);
      CHECK(out.find("manifest.json: Timeout was reached") != std::string::npos);
      CHECK(out.find("(after 2 attempts)") != std::string::npos);
      CHECK(seconds < 10.0);
      CHECK(stalled.requests("manifest").size() - before == 2);
    }
    CHECK_FALSE(fs::exists(report));
  }
  // A manifest over --max-manifest-bytes: report refuses it (before: read whole for the page).
  t::FaultServer served(tmp / "served", {tmp / "www", 0, {}, {}});
  std::string out;
  CHECK(t::run_command(tool + " report " + served.url("ds") + " -o " +
                           (tmp / "small.html").string() + " --max-manifest-bytes 100" + flags,
                       &out) == 1);
  CHECK_MESSAGE(out.find("over the limit of 100 bytes (max_manifest_bytes") != std::string::npos,
                out);
  CHECK_FALSE(fs::exists(tmp / "small.html"));
  // verify --json reads the manifest once and places the faults in that one (before: 3 GETs).
  const size_t before = served.requests("manifest").size();
  REQUIRE(t::run_command(tool + " verify --json " + served.url("ds") + flags, &out) == 0);
  CHECK(served.requests("manifest").size() - before == 1);
  // A remote dataset's objects are not listed: no answer, rather than an empty list of strays.
  CHECK_MESSAGE(out.find("\"unlisted_shard_files\": null") != std::string::npos, out);
}

TEST_CASE("response headers too large for libcurl: named as the server's, with the URL, once") {
  // One 200 KB header line on the manifest; 20,000 header lines (1.2 MB) on every shard's range.
  // Before: "Out of memory", and "Failure when receiving data from the peer (Too large response
  // headers: 307252 > 307200) (after 4 attempts)".
  TempDir tmp("bigheaders");
  t::write_remote_fixture(tmp / "www" / "ds");
  t::FaultServer manifest(tmp / "manifest",
                          {tmp / "www", 0, {R"({"path": "manifest", "huge_header": 204800})"}, {}});
  DatasetOptions o;
  o.source.remote_retries = 3;
  const std::string secret_query = "?token=QueryTokenSecret";
  try {
    Dataset::open(manifest.url("ds") + secret_query, o);
    FAIL("a manifest with a 200 KB header line was read");
  } catch (const Error& e) {
    const std::string message = e.what();
    INFO(message);
    CHECK(e.code() == ErrorCode::kIo);
    CHECK(e.file() == manifest.url("ds/manifest.json") + "?***");
    CHECK(e.reason().rfind("the server's response headers are too large", 0) == 0);
    CHECK(message.find("QueryTokenSecret") == std::string::npos);
  }
  CHECK(manifest.requests("manifest").size() == 1);

  t::FaultServer shards(tmp / "shards",
                        {tmp / "www", 0, {R"({"path": "\\.shard$", "many_headers": 20000})"}, {}});
  const Dataset ds = Dataset::open(shards.url("ds"), o);
  std::vector<unsigned char> record(ds.schema().record_size());
  try {
    ds.read(0, record.data());
    FAIL("a shard answered with 1.2 MB of headers was read");
  } catch (const Error& e) {
    INFO(std::string(e.what()));
    CHECK(e.file().rfind(shards.url("ds/shard-"), 0) == 0);
    CHECK(e.reason().find("the server's response headers are too large") != std::string::npos);
    CHECK(e.reason().find("attempts") == std::string::npos);
  }
  // No range retried: at most a prefetch's request and the read's own, which does not trust a
  // failed prefetch (before: 4 attempts of each).
  std::map<std::pair<std::string, std::string>, int> asked;
  for (const auto& r : shards.requests(".shard")) ++asked[{r.path, r.range}];
  for (const auto& [range, times] : asked) CHECK_MESSAGE(times <= 2, range.first, range.second);
}
