// Redirects (HF Hub's resolve/ URLs, object-store front ends) against a real nginx on 127.0.0.1
// answering 301, 302, 307 and 308: followed within http(s) up to 5 times, refused to another
// scheme, and credentials (SigV4's Authorization, x-amz-*, the session token) never sent to
// another host, checked by servers that log what they received.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>

#include "core/dataset.h"
#include "core/error.h"
#include "remote_test_util.h"
#include "servers.h"
#include "test_util.h"

using namespace shardkit;
using namespace shardkit::loader;
using shardkit::testing::TempDir;
namespace fs = std::filesystem;
namespace t = shardkit::testing;

namespace {

const char* const kRedirects =
    "    location /moved/ { rewrite ^/moved/(.*)$ /$1 redirect; }\n"
    "    location /perm/ { rewrite ^/perm/(.*)$ /moved/$1 permanent; }\n"
    "    location ~ ^/temp/(.*)$ { return 307 /perm308/$1; }\n"
    "    location ~ ^/perm308/(.*)$ { return 308 /$1; }\n"
    "    location /loop/ { rewrite ^/loop/(.*)$ /loop/$1 redirect; }\n"
    "    location /to-ftp/ { return 302 ftp://127.0.0.1/ds/manifest.json; }\n"
    "    location /to-file/ { return 302 file:///etc/passwd; }\n";

struct Served {
  TempDir tmp{"redirect"};
  std::unique_ptr<t::Nginx> nginx;
  Served() {
    t::write_remote_fixture(tmp / "www" / "ds");
    nginx = std::make_unique<t::Nginx>(tmp / "www", tmp / "nginx", kRedirects);
  }
};

}  // namespace

TEST_CASE("301, 302, 307 and 308 are followed: the same batches as the local copy") {
  Served s;
  const LoaderOptions o = t::remote_options();
  Loader local(s.tmp / "www" / "ds", o);
  const auto expected = t::all_batches(local);
  for (const std::string prefix : {"moved", "perm", "temp"}) {
    Loader remote(s.nginx->url(prefix + "/ds"), o);
    CHECK_MESSAGE(t::all_batches(remote) == expected, prefix);
  }
  // Every hop went through nginx: 301 -> 302 -> 200/206, and 307 -> 308 -> 206.
  for (const std::string status : {"\" 301 ", "\" 302 ", "\" 307 ", "\" 308 "}) {
    MESSAGE("nginx answered " << status.substr(2, 3) << " " << s.nginx->logged_requests(status)
                              << " times");
    CHECK_MESSAGE(s.nginx->logged_requests(status) > 40, status);
  }
}

TEST_CASE("more than 5 redirects, or one to another scheme, is an error that says so") {
  Served s;
  try {
    Dataset::open(s.nginx->url("loop/ds"));
    FAIL("an endless redirect was followed");
  } catch (const Error& e) {
    CHECK(std::string(e.what()).find("more than 5 redirects (the last to " +
                                     s.nginx->url("loop/ds/manifest.json") + ")") !=
          std::string::npos);
  }
  CHECK(s.nginx->logged_requests("/loop/", 6) == 6);  // one try: another would loop the same
  for (const auto& [from, to] : std::vector<std::pair<std::string, std::string>>{
           {"to-ftp", "ftp://127.0.0.1/ds/manifest.json"}, {"to-file", "file:///etc/passwd"}}) {
    try {
      Dataset::open(s.nginx->url(from + "/ds"));
      FAIL("a redirect to " << to << " was followed");
    } catch (const Error& e) {
      CHECK(e.code() == ErrorCode::kUnsupported);
      CHECK(std::string(e.what()).find("HTTP 302 redirect to " + to +
                                       ", another scheme: only http:// and https:// redirects "
                                       "are followed") != std::string::npos);
    }
    CHECK(s.nginx->logged_requests("/" + from + "/", 1) == 1);
  }
}

TEST_CASE("a signed request redirected to another host carries no credential there") {
  TempDir tmp("redirect-s3");
  t::write_remote_fixture(tmp / "s3" / "bucket" / "datasets" / "ds");
  t::write_remote_fixture(tmp / "cdn" / "ds");
  t::FaultServer cdn(tmp / "cdn-server", {tmp / "cdn", 0, {}, {}});
  const std::string elsewhere = "http://localhost:" + std::to_string(cdn.port()) + "/ds/\\\\1";
  t::FaultServer s3(tmp / "s3-server",
                    {tmp / "s3",
                     0,
                     {R"({"path": "^/bucket/same/(.*)$", "redirect": "/bucket/datasets/ds/\\1",
                          "status": 307})",
                      R"({"path": "^/bucket/elsewhere/(.*)$", "redirect": ")" + elsewhere +
                          R"(", "status": 302})"},
                     {"AKIDREDIRECT:redirect/Secret+Key:the-session-token"}});
  ::setenv("AWS_ACCESS_KEY_ID", "AKIDREDIRECT", 1);
  ::setenv("AWS_SECRET_ACCESS_KEY", "redirect/Secret+Key", 1);
  ::setenv("AWS_SESSION_TOKEN", "the-session-token", 1);
  ::setenv("AWS_REGION", "us-east-1", 1);
  ::setenv("AWS_ENDPOINT_URL", ("http://127.0.0.1:" + std::to_string(s3.port())).c_str(), 1);
  const Dataset local = Dataset::open(tmp / "cdn" / "ds");
  std::vector<unsigned char> a(local.schema().record_size()), b(a.size());
  local.read(12345, a.data());
  // The same host: the redirected request is signed again (the server checks every one).
  {
    const Dataset ds = Dataset::open("s3://bucket/same");
    ds.read(12345, b.data());
    CHECK(a == b);
  }
  const auto same = s3.requests("/bucket/datasets/ds/");
  CHECK(same.size() >= 3);  // manifest, index, block
  for (const auto& r : same) CHECK(r.credentials.find("authorization") != std::string::npos);
  // Another host: reached, and nothing secret sent there.
  {
    const Dataset ds = Dataset::open("s3://bucket/elsewhere");
    ds.read(12345, b.data());
    CHECK(a == b);
  }
  MESSAGE("the other host got " << cdn.requests().size() << " requests; the same host "
                                << same.size() << " after its own redirect");
  CHECK(cdn.requests().size() >= 3);
  for (const auto& r : cdn.requests()) CHECK_MESSAGE(r.credentials == "-", r.path);
  for (const auto& r : s3.requests("/bucket/elsewhere/"))
    CHECK(r.credentials == "authorization,x-amz-security-token,x-amz-date,x-amz-content-sha256");
  for (const char* v : {"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN",
                        "AWS_REGION", "AWS_ENDPOINT_URL"})
    ::unsetenv(v);
}
