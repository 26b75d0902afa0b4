// Datasets read from S3: the SigV4 signature libcurl produces for shardkit checked against
// AWS's published example, and a real S3-compatible server (s3rver, npm) on 127.0.0.1 serving
// a dataset uploaded by the curl command-line tool, behind a proxy that verifies every request's
// signature as S3 does (tests/servers/sigv4.py, from AWS's published algorithm; s3rver accepts
// any), so that a wrong or misread key, a lost session token or a profile not honoured is a 403.
// Secrets never appear in messages.
#include <doctest/doctest.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cstdlib>
#include <filesystem>
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

// Accepts one connection, keeps the request head, answers 206 with ten bytes.
class OneShotServer {
 public:
  OneShotServer() {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a);
    ::listen(fd_, 1);
    socklen_t len = sizeof a;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] {
      const int c = ::accept(fd_, nullptr, nullptr);
      char buf[4096];
      while (request_.find("\r\n\r\n") == std::string::npos) {
        const ssize_t n = ::recv(c, buf, sizeof buf, 0);
        if (n <= 0) break;
        request_.append(buf, static_cast<size_t>(n));
      }
      const std::string reply =
          "HTTP/1.1 206 Partial Content\r\nContent-Length: 10\r\n"
          "Content-Range: bytes 0-9/100\r\nConnection: close\r\n\r\n0123456789";
      ::send(c, reply.data(), reply.size(), MSG_NOSIGNAL);
      ::close(c);
    });
  }
  ~OneShotServer() {
    thread_.join();
    ::close(fd_);
  }
  int port() const { return port_; }
  const std::string& request() {
    thread_.join();
    thread_ = std::thread([] {});
    return request_;
  }

 private:
  int fd_, port_;
  std::thread thread_;
  std::string request_;
};

std::string header(const std::string& request, const std::string& name) {
  std::string lower = request;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const auto at = lower.find("\r\n" + name + ":");
  if (at == std::string::npos) return "";
  const auto start = request.find_first_not_of(' ', at + 3 + name.size());
  return request.substr(start, request.find("\r\n", start) - start);
}

// Runs curl (the command-line tool, an implementation independent of shardkit's requests).
void curl_s3(const std::string& args) {
  const std::string cmd = t::s3rver_curl(args);
  std::string out;
  const int rc = t::run_command(cmd, &out);
  INFO(cmd, ": ", out);
  REQUIRE(rc == 0);
}

const char* const kCredentialVariables[] = {
    "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN",          "AWS_REGION",
    "AWS_ENDPOINT_URL",  "AWS_PROFILE",           "AWS_SHARED_CREDENTIALS_FILE"};

struct S3Env {
  std::string home = std::getenv("HOME") ? std::getenv("HOME") : "";
  explicit S3Env(const std::string& endpoint, const std::string& secret = "S3RVER") {
    ::setenv("AWS_ACCESS_KEY_ID", "S3RVER", 1);
    ::setenv("AWS_SECRET_ACCESS_KEY", secret.c_str(), 1);
    ::setenv("AWS_REGION", "us-east-1", 1);
    ::setenv("AWS_ENDPOINT_URL", endpoint.c_str(), 1);
    ::unsetenv("AWS_SESSION_TOKEN");
  }
  ~S3Env() {
    for (const char* v : kCredentialVariables) ::unsetenv(v);
    ::setenv("HOME", home.c_str(), 1);
  }
};

// Keys the verifying proxy accepts besides s3rver's (ACCESS:SECRET[:SESSION_TOKEN]). Secrets
// hold '/' and '+' as AWS's do.
const std::vector<std::string> kKeys = {
    "AKIDENV:env/Secret+Key1", "AKIDTOKEN:token/Secret+Key2:FwoGZXIvYXdzEJr//////////wEaDExample",
    "AKIDPROFILE:profile/Secret+Key3", "AKIDDEFAULT:default/Secret+Key4",
    "AKIDPTOKEN:ptoken/Secret+Key5:profile-session-token"};

// s3rver with the fixture dataset uploaded to s3://bucket/datasets/ds.
struct Served {
  TempDir tmp{"s3"};
  fs::path local = tmp / "ds";
  std::unique_ptr<t::S3rver> server;
  Served() {
    t::write_remote_fixture(local);
    server = std::make_unique<t::S3rver>(tmp / "s3data", t::SigV4Keys{kKeys});
    curl_s3("-X PUT " + server->endpoint() + "/bucket");
    for (const auto& e : fs::directory_iterator(local))
      curl_s3("-T " + e.path().string() + " " + server->endpoint() + "/bucket/datasets/ds/" +
              e.path().filename().string());
  }
};

}  // namespace

TEST_CASE("the SigV4 Authorization header equals AWS's published example") {
  // https://docs.aws.amazon.com/AmazonS3/latest/API/sig-v4-header-based-auth.html, "Example:
  // GET Object": GET /test.txt from examplebucket with Range: bytes=0-9 at 20130524T000000Z.
  OneShotServer server;
  remote::AwsSigning signing;
  signing.access_key = "AKIAIOSFODNN7EXAMPLE";
  signing.secret_key = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";
  signing.region = "us-east-1";
  remote::HttpTransport transport(SourceOptions{}, signing);
  transport.set_connect_to(
      {"examplebucket.s3.amazonaws.com:80:127.0.0.1:" + std::to_string(server.port())});
  transport.set_extra_headers({"x-amz-date: 20130524T000000Z"});
  unsigned char out[10];
  transport.get_range("http://examplebucket.s3.amazonaws.com/test.txt", "test.txt", 0, 10, out);
  CHECK(std::string(reinterpret_cast<char*>(out), 10) == "0123456789");
  const std::string request = server.request();
  // curl separates the three parts with ", ", the example with ","; AWS accepts both.
  std::string authorization = header(request, "authorization");
  for (auto at = authorization.find(", "); at != std::string::npos; at = authorization.find(", "))
    authorization.erase(at + 1, 1);
  CHECK(authorization ==
        "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request,"
        "SignedHeaders=host;range;x-amz-content-sha256;x-amz-date,"
        "Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41");
  CHECK(header(request, "x-amz-content-sha256") ==
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

TEST_CASE("a dataset on s3rver yields the local copy's batches") {
  Served s;
  S3Env env(s.server->endpoint());
  const LoaderOptions o = t::remote_options();
  Loader local(s.local, o);
  Loader remote("s3://bucket/datasets/ds", o);
  const auto expected = t::all_batches(local);
  CHECK(t::all_batches(remote) == expected);
  const double ratio = double(remote.dataset().io_stats().bytes_fetched) /
                       double(remote.dataset().manifest().bytes_on_disk());
  MESSAGE("fetched " << ratio << "x the dataset's bytes");
  CHECK(ratio <= 1.05);
  const VerifyReport report = verify_dataset("s3://bucket/datasets/ds/", SourceOptions{});
  CHECK(report.ok());
  CHECK(report.records_checked == 20000);

  // Credentials from a credentials file when the variables are not set.
  ::unsetenv("AWS_ACCESS_KEY_ID");
  ::unsetenv("AWS_SECRET_ACCESS_KEY");
  t::write_file(s.tmp / "credentials",
                "[default]\naws_access_key_id = S3RVER\naws_secret_access_key = S3RVER\n");
  ::setenv("AWS_SHARED_CREDENTIALS_FILE", (s.tmp / "credentials").c_str(), 1);
  CHECK(Dataset::open("s3://bucket/datasets/ds").size() == 20000);
}

TEST_CASE("S3 errors name the s3:// URL and never a secret") {
  Served s;
  const std::string secret = "Sup3rSecretValue-do-not-print";
  {
    S3Env env(s.server->endpoint(), secret);
    // A wrong secret: refused by the verifying proxy, as S3 would.
    try {
      Dataset::open("s3://bucket/missing");
      FAIL("a wrong secret was accepted");
    } catch (const Error& e) {
      CHECK(std::string(e.what()).find("s3://bucket/missing/manifest.json: HTTP 403 "
                                       "SignatureDoesNotMatch: access denied") !=
            std::string::npos);
      CHECK(std::string(e.what()).find(secret) == std::string::npos);
    }
    // The tools print no secret either, on success or failure.
    std::string out;
    t::run_command(t::tool_path("shard-inspect") + " verify s3://bucket/missing", &out);
    CHECK(out.find("s3://bucket/missing") != std::string::npos);
    CHECK(out.find(secret) == std::string::npos);
  }
  S3Env env(s.server->endpoint());
  try {
    Dataset::open("s3://bucket/missing");
    FAIL("a missing prefix opened");
  } catch (const Error& e) {
    CHECK(std::string(e.what()).find("HTTP 404") != std::string::npos);
  }
  std::string out;
  CHECK(t::run_command(t::tool_path("shard-inspect") + " verify s3://bucket/datasets/ds", &out) ==
        0);
  CHECK(out.find("S3RVER") == std::string::npos);
}

namespace {

// Opens the s3:// dataset with the credentials the environment gives; "" on success, else the
// error (a 403 names S3's code).
std::string open_with_environment() {
  try {
    const uint64_t records = Dataset::open("s3://bucket/datasets/ds").size();
    return records == 20000 ? "" : "opened with " + std::to_string(records) + " records";
  } catch (const Error& e) {
    return e.what();
  }
}

// The environment of one case: no credential variable but the endpoint and `vars`.
void environment(const std::string& endpoint,
                 std::vector<std::pair<const char*, std::string>> vars) {
  for (const char* v : kCredentialVariables) ::unsetenv(v);
  ::setenv("AWS_ENDPOINT_URL", endpoint.c_str(), 1);
  ::setenv("AWS_REGION", "us-east-1", 1);
  for (const auto& [name, value] : vars) ::setenv(name, value.c_str(), 1);
}

}  // namespace

// The fixture at s3://bucket/datasets/ds, served from files by the verifying server itself
// (without s3rver: nothing to upload).
struct VerifiedFiles {
  TempDir tmp{"s3keys"};
  std::unique_ptr<t::FaultServer> server;
  VerifiedFiles() {
    t::write_remote_fixture(tmp / "s3" / "bucket" / "datasets" / "ds");
    server = std::make_unique<t::FaultServer>(tmp / "server",
                                              t::FaultServer::Options{tmp / "s3", 0, {}, kKeys});
  }
  std::string endpoint() const { return "http://127.0.0.1:" + std::to_string(server->port()); }
};

TEST_CASE("credential precedence, proven by a server that verifies every signature") {
  VerifiedFiles s;
  S3Env restore(s.endpoint());
  const std::string endpoint = s.endpoint();
  const std::string denied = "HTTP 403 SignatureDoesNotMatch";
  const std::string bad_token = "HTTP 403 InvalidToken";
  // A credentials file as the AWS CLI writes them, with comments, CRLF line ends and spaces.
  auto credentials = [&](const fs::path& file, bool default_right, bool profile_right) {
    fs::create_directories(file.parent_path());
    t::write_file(file, std::string("# written by aws configure\r\n[default]\r\n") +
                            "aws_access_key_id = AKIDDEFAULT\r\n"
                            "aws_secret_access_key = default/Secret+Key4" +
                            (default_right ? "" : "X") +
                            "\r\n\r\n; a second profile\r\n[profile-b]\r\n"
                            "aws_access_key_id=AKIDPROFILE\r\n"
                            "aws_secret_access_key=profile/Secret+Key3" +
                            (profile_right ? "" : "X") +
                            "\r\n[ptok]\r\naws_access_key_id = AKIDPTOKEN\r\n"
                            "aws_secret_access_key = ptoken/Secret+Key5\r\n"
                            "aws_session_token = profile-session-token\r\n");
  };
  const fs::path a = s.tmp / "default-right", b = s.tmp / "profile-right";
  credentials(a, true, false);
  credentials(b, false, true);

  SUBCASE("AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY") {
    environment(endpoint,
                {{"AWS_ACCESS_KEY_ID", "AKIDENV"}, {"AWS_SECRET_ACCESS_KEY", "env/Secret+Key1"}});
    CHECK(open_with_environment() == "");
    ::setenv("AWS_SECRET_ACCESS_KEY", "env/Secret+Key1X", 1);
    CHECK(open_with_environment().find(denied) != std::string::npos);
  }
  SUBCASE("AWS_SESSION_TOKEN is sent and signed") {
    environment(endpoint, {{"AWS_ACCESS_KEY_ID", "AKIDTOKEN"},
                           {"AWS_SECRET_ACCESS_KEY", "token/Secret+Key2"},
                           {"AWS_SESSION_TOKEN", "FwoGZXIvYXdzEJr//////////wEaDExample"}});
    CHECK(open_with_environment() == "");
    ::setenv("AWS_SESSION_TOKEN", "FwoGZXIvYXdzEJr//////////wEaDExampleX", 1);
    CHECK(open_with_environment().find(bad_token) != std::string::npos);
    ::unsetenv("AWS_SESSION_TOKEN");
    CHECK(open_with_environment().find(bad_token) != std::string::npos);
  }
  SUBCASE("AWS_PROFILE picks the profile of the credentials file") {
    environment(endpoint, {{"AWS_SHARED_CREDENTIALS_FILE", a.string()}});
    CHECK(open_with_environment() == "");  // [default]
    ::setenv("AWS_PROFILE", "profile-b", 1);
    CHECK(open_with_environment().find(denied) != std::string::npos);
    environment(endpoint, {{"AWS_SHARED_CREDENTIALS_FILE", b.string()}});
    CHECK(open_with_environment().find(denied) != std::string::npos);
    ::setenv("AWS_PROFILE", "profile-b", 1);
    CHECK(open_with_environment() == "");
    // A profile's session token; a stale AWS_SESSION_TOKEN does not go with the file's keys.
    environment(endpoint, {{"AWS_SHARED_CREDENTIALS_FILE", b.string()},
                           {"AWS_PROFILE", "ptok"},
                           {"AWS_SESSION_TOKEN", "stale-token-of-another-key"}});
    CHECK(open_with_environment() == "");
  }
  SUBCASE("the default ~/.aws/credentials") {
    environment(endpoint, {{"HOME", (s.tmp / "home").string()}});
    credentials(s.tmp / "home" / ".aws" / "credentials", true, false);
    CHECK(open_with_environment() == "");
    credentials(s.tmp / "home" / ".aws" / "credentials", false, true);
    CHECK(open_with_environment().find(denied) != std::string::npos);
  }
  SUBCASE("the environment's keys come before any file, with no fallback") {
    environment(endpoint, {{"AWS_ACCESS_KEY_ID", "AKIDENV"},
                           {"AWS_SECRET_ACCESS_KEY", "env/Secret+Key1"},
                           {"AWS_SHARED_CREDENTIALS_FILE", b.string()}});
    CHECK(open_with_environment() == "");
    ::setenv("AWS_SHARED_CREDENTIALS_FILE", a.string().c_str(), 1);
    ::setenv("AWS_SECRET_ACCESS_KEY", "env/Secret+Key1X", 1);
    CHECK(open_with_environment().find(denied) != std::string::npos);
  }
}
