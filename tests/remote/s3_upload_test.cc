// shardify --out s3://... and shardify merge into s3:// against a real S3-compatible server
// (s3rver on 127.0.0.1, behind a proxy that verifies every request's SigV4 signature): the objects
// equal a local conversion's files byte for byte (fetched back with the curl command-line tool, not
// with shardkit), the manifest is written after every shard, an existing dataset is not replaced
// without --force (and the refusal comes before any conversion work), and a failed upload publishes
// no manifest. A run killed during its upload leaves its local copy, which the next run removes.
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <thread>

#include "core/dataset.h"
#include "reliability/process_util.h"
#include "remote_test_util.h"
#include "servers.h"
#include "test_util.h"

using namespace shardkit;
using shardkit::testing::TempDir;
namespace fs = std::filesystem;
namespace t = shardkit::testing;

namespace {

std::string q(const fs::path& p) { return "'" + p.string() + "'"; }

// The environment of every command this test runs: s3rver's endpoint and keys, TMPDIR.
std::string env_for(const t::S3rver& server, const fs::path& tmpdir) {
  return "env AWS_ACCESS_KEY_ID=S3RVER AWS_SECRET_ACCESS_KEY=S3RVER AWS_REGION=us-east-1 "
         "AWS_ENDPOINT_URL=" +
         server.endpoint() + " TMPDIR=" + q(tmpdir) + " ";
}

std::string curl_get(const std::string& url) {
  std::string out;
  const std::string cmd = t::s3rver_curl("'" + url + "'");
  const int rc = t::run_command(cmd, &out);
  INFO(cmd, ": ", out.substr(0, 300));
  REQUIRE(rc == 0);
  return out;
}

int curl_status(const std::string& url) {
  std::string out;
  // Without -f: the status of a failed request is the answer.
  std::string cmd = t::s3rver_curl("-o /dev/null -w '%{http_code}' '" + url + "'");
  cmd.erase(cmd.find(" -f "), 3);
  t::run_command(cmd, &out);
  return std::atoi(out.c_str());
}

// Every file of the local dataset `dir` equals the object under `url`.
void require_same_objects(const fs::path& dir, const std::string& url) {
  size_t files = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    INFO(e.path().filename().string());
    REQUIRE(curl_get(url + "/" + e.path().filename().string()) == t::read_file(e.path()));
    ++files;
  }
  CHECK(files >= 3);  // several shards and the manifest
}

// s3rver keeps each object in DIR/BUCKET/KEY._S3rver_object.
fs::file_time_type stored_at(const fs::path& data, const std::string& key) {
  return fs::last_write_time(data / (key + "._S3rver_object"));
}

struct Setup {
  TempDir tmp{"s3up"};
  fs::path data = tmp / "s3data", tmpdir = tmp / "tmpdir", in = tmp / "in";
  std::unique_ptr<t::S3rver> server;
  std::string env, convert;
  Setup() {
    fs::create_directories(tmpdir);
    fs::create_directories(in);
    // A WordPiece vocabulary of the corpus' words: what matters here is the bytes, not ids.
    const std::string text =
        t::read_file(fs::path(SHARDKIT_SOURCE_DIR) / "tests/data/tokenizer" / "en_moby_dick.txt") +
        t::read_file(fs::path(SHARDKIT_SOURCE_DIR) / "tests/data/tokenizer" / "en_fortunes.txt");
    std::string vocab = "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\n";
    std::vector<std::string> words;
    std::string w;
    for (char c : text + " ") {
      if (std::isalnum(static_cast<unsigned char>(c))) {
        w += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      } else if (!w.empty()) {
        words.push_back(w);
        w.clear();
      }
    }
    std::sort(words.begin(), words.end());
    words.erase(std::unique(words.begin(), words.end()), words.end());
    for (const auto& x : words) vocab += x + "\n";
    t::write_file(tmp / "vocab.txt", vocab);
    for (int i = 0; i < 4; ++i)
      t::write_file(in / ("part" + std::to_string(i) + ".txt"), text.substr(i * 1500, 1500));
    server = std::make_unique<t::S3rver>(data, t::SigV4Keys{});  // signatures checked
    env = env_for(*server, tmpdir);
    REQUIRE(curl_status(server->endpoint() + "/bucket") == 404);
    std::string out;
    REQUIRE(t::run_command(t::s3rver_curl("-X PUT " + server->endpoint() + "/bucket"), &out) == 0);
    convert = t::tool_path("shardify/shardify") + " --input " + q(in) +
              " --task lm --doc-sep line --max-len 16 --block-size 1024 --shard-size 2000 "
              "--tokenizer " +
              q(tmp / "vocab.txt");
  }
  int run(const std::string& cmd, std::string* out) { return t::run_command(env + cmd, out); }
  bool tmpdir_empty() const { return fs::is_empty(tmpdir); }
};

}  // namespace

TEST_CASE("shardify --out s3:// uploads the local conversion's bytes, the manifest last") {
  Setup s;
  std::string out;
  REQUIRE(t::run_command(s.convert + " --out " + q(s.tmp / "local"), &out) == 0);
  INFO(out);
  REQUIRE(s.run(s.convert + " --out s3://bucket/datasets/lm/", &out) == 0);
  CHECK(out.find("s3://bucket/datasets/lm") != std::string::npos);
  CHECK(s.tmpdir_empty());  // the staging copy is gone
  require_same_objects(s.tmp / "local", s.server->endpoint() + "/bucket/datasets/lm");
  const Manifest m = Manifest::load(s.tmp / "local");
  REQUIRE(m.shards.size() >= 2);
  const auto manifest_at = stored_at(s.data / "bucket", "datasets/lm/manifest.json");
  for (const ShardEntry& e : m.shards)
    CHECK(stored_at(s.data / "bucket", "datasets/lm/" + e.name) <= manifest_at);
  // shardkit reads it back: the same records as the local copy.
  ::setenv("AWS_ACCESS_KEY_ID", "S3RVER", 1);
  ::setenv("AWS_SECRET_ACCESS_KEY", "S3RVER", 1);
  ::setenv("AWS_ENDPOINT_URL", s.server->endpoint().c_str(), 1);
  CHECK(Dataset::open("s3://bucket/datasets/lm").size() == m.record_count());
  ::unsetenv("AWS_ENDPOINT_URL");

  // An existing dataset is not replaced without --force, and that is found before converting.
  REQUIRE(s.run(s.convert + " --zstd-level 9 --out s3://bucket/datasets/lm", &out) != 0);
  CHECK(out.find("s3://bucket/datasets/lm/manifest.json") != std::string::npos);
  CHECK(out.find("--force") != std::string::npos);
  CHECK(out.find("records") == std::string::npos);  // no conversion summary: it never ran
  CHECK(out.find("S3RVER") == std::string::npos);
  require_same_objects(s.tmp / "local", s.server->endpoint() + "/bucket/datasets/lm");
  // With --force it is replaced.
  REQUIRE(t::run_command(s.convert + " --zstd-level 9 --out " + q(s.tmp / "local24"), &out) == 0);
  REQUIRE(s.run(s.convert + " --zstd-level 9 --force --out s3://bucket/datasets/lm", &out) == 0);
  CHECK(curl_get(s.server->endpoint() + "/bucket/datasets/lm/manifest.json") ==
        t::read_file(s.tmp / "local24" / "manifest.json"));
  CHECK(s.tmpdir_empty());
}

TEST_CASE("shardify merge into s3:// equals the local merge; a failed upload publishes nothing") {
  Setup s;
  std::string out;
  for (int p = 0; p < 2; ++p)
    REQUIRE(t::run_command(s.convert + " --part " + std::to_string(p) + "/2 --out " +
                               q(s.tmp / ("p" + std::to_string(p))),
                           &out) == 0);
  const std::string parts = " " + q(s.tmp / "p1") + " " + q(s.tmp / "p0");
  REQUIRE(t::run_command(
              t::tool_path("shardify/shardify") + " merge " + q(s.tmp / "merged") + parts, &out) ==
          0);
  REQUIRE(s.run(t::tool_path("shardify/shardify") + " merge s3://bucket/merged" + parts, &out) ==
          0);
  INFO(out);
  require_same_objects(s.tmp / "merged", s.server->endpoint() + "/bucket/merged");
  // The staging directory sat beside the parts and is gone.
  for (const auto& e : fs::directory_iterator(s.tmp.path()))
    CHECK(e.path().filename().string().rfind(".shardify-upload", 0) != 0);
  CHECK(s.run(t::tool_path("shardify/shardify") + " merge s3://bucket/merged" + parts, &out) != 0);
  CHECK(out.find("--force") != std::string::npos);

  // A bucket that does not exist: every shard PUT fails, the error names the s3:// object, and
  // no manifest appears.
  CHECK(s.run(t::tool_path("shardify/shardify") + " merge s3://nobucket/merged" + parts, &out) !=
        0);
  CHECK(out.find("s3://nobucket/merged/shard-") != std::string::npos);
  CHECK(curl_status(s.server->endpoint() + "/nobucket/merged/manifest.json") == 404);
  // Only s3:// is a remote output.
  CHECK(t::run_command(t::tool_path("shardify/shardify") + " merge http://127.0.0.1:1/x" + parts,
                       &out) != 0);
  CHECK(out.find("s3://bucket/prefix") != std::string::npos);
  CHECK(!fs::exists("http:"));
  // No credentials: a clear error before any work.
  CHECK(t::run_command("env -u AWS_ACCESS_KEY_ID -u AWS_SECRET_ACCESS_KEY "
                       "AWS_SHARED_CREDENTIALS_FILE=/nonexistent " +
                           t::tool_path("shardify/shardify") + " merge s3://bucket/m2" + parts,
                       &out) != 0);
  CHECK(out.find("no S3 credentials") != std::string::npos);
}

TEST_CASE("an upload killed mid-way leaves its local copy to the next shardify, which removes it") {
  Setup s;
  // A proxy that never answers the first upload's second shard, so that the kill comes while the
  // local copy is complete and the upload is under way.
  t::S3rver direct(s.tmp / "s3direct");
  std::string out;
  REQUIRE(t::run_command(t::s3rver_curl("-X PUT " + direct.endpoint() + "/bucket"), &out) == 0);
  t::FaultServer stalling(s.tmp / "stall",
                          {{}, direct.port(), {R"({"path": "first/shard-00001", "stall": true})"}});
  const std::vector<std::string> argv = {
      "/usr/bin/env",
      "AWS_ACCESS_KEY_ID=S3RVER",
      "AWS_SECRET_ACCESS_KEY=S3RVER",
      "AWS_REGION=us-east-1",
      "AWS_ENDPOINT_URL=" + stalling.url("").substr(0, stalling.url("").size() - 1),
      "TMPDIR=" + s.tmpdir.string(),
      "/bin/sh",
      "-c",
      "exec " + s.convert + " --out s3://bucket/first"};
  const pid_t pid = reliability::spawn(argv, (s.tmp / "first.log").string());
  for (int i = 0; i < 400 && stalling.requests("first/shard-00001").empty(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  REQUIRE(!stalling.requests("first/shard-00001").empty());
  ::kill(pid, SIGKILL);
  reliability::wait_for(pid);
  std::vector<fs::path> left;
  for (const auto& e : fs::directory_iterator(s.tmpdir)) left.push_back(e.path());
  REQUIRE(left.size() == 1);
  CHECK(left[0].filename().string().rfind(".shardify-upload.partial-", 0) == 0);
  CHECK(fs::exists(left[0] / "dataset" / "manifest.json"));

  // A file of the user's in TMPDIR stays; the killed run's copy goes with the next conversion.
  t::write_file(s.tmpdir / "mine.txt", "not shardkit's");
  REQUIRE(s.run(s.convert + " --out s3://bucket/second", &out) == 0);
  INFO(out);
  left.clear();
  for (const auto& e : fs::directory_iterator(s.tmpdir)) left.push_back(e.path().filename());
  CHECK(left == std::vector<fs::path>{"mine.txt"});
}
