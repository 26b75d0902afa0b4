// Hostile manifests and shard headers: every checksum is made to match (see shard_reseal.h), so
// only the structural checks stand in the way. Each case must be refused with an error that
// names the file and says what is wrong, by the reader and by verify_dataset alike, and never be
// followed: where a path leads to a valid copy of the data, following it would succeed, so a
// passing test shows the path was not followed.
#include <doctest/doctest.h>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <climits>
#include <cstdio>

#include "core/shard_file.h"
#include "core/verify.h"
#include "reliability_util.h"
#include "shard_reseal.h"

namespace shardkit::reliability {
namespace {

constexpr uint64_t kRecords = 100;

struct Fixture {
  testing::TempDir tmp{"hostile"};
  fs::path dir = tmp / "ds";
  fs::path outside = tmp / "outside";
  Manifest manifest;
  std::string manifest_text;

  Fixture() {
    manifest = write_small_dataset(dir, {.records = kRecords});
    manifest_text = read_bytes(dir / "manifest.json");
    copy_dataset(dir, outside);  // a valid copy that a followed path would find
  }
  fs::path shard0() const { return dir / manifest.shards[0].name; }
  void put_manifest(const Manifest& m) const { write_manifest(dir, m); }
  // Replaces text in the manifest body, written compactly ({"key":value,...}, so that edits
  // need not follow the writer's line breaks), and writes it back with a matching checksum line.
  void edit_manifest(const std::string& from, const std::string& to) const {
    std::string body = manifest_text.substr(0, manifest_text.size() - format::kManifestTailSize);
    body.resize(body.size() - 2);  // the ",\n" before the checksum line
    body = nlohmann::ordered_json::parse(body + "}").dump();
    body.back() = ',';
    body += '\n';
    const size_t at = body.find(from);
    REQUIRE_MESSAGE(at != std::string::npos, "manifest has no '" << from << "'");
    body.replace(at, from.size(), to);
    write_bytes(dir / "manifest.json", with_checksum_line(body));
  }
  // Edits shard 0 with `edit`, reseals it, and makes the manifest agree with its new size,
  // checksum and (optionally) record count.
  template <typename Edit>
  void craft_shard0(Edit edit, std::optional<uint64_t> manifest_records = std::nullopt) const {
    std::string bytes = read_bytes(shard0());
    edit(reinterpret_cast<unsigned char*>(bytes.data()), bytes);
    const uint64_t footer_checksum = reseal_shard(bytes);
    write_bytes(shard0(), bytes);
    Manifest m = manifest;
    m.shards[0].bytes = bytes.size();
    m.shards[0].checksum = footer_checksum;
    if (manifest_records) m.shards[0].records = *manifest_records;
    put_manifest(m);
  }
};

// Reading `dir` in full must fail with an Error naming `file` whose message contains `reason`;
// verify_dataset must report the same.
void expect_refused(const fs::path& dir, const fs::path& file, const std::string& reason) {
  const ReadOutcome read = read_and_compare(dir, kRecords);
  REQUIRE_MESSAGE(read.error.has_value(), "accepted; read " << read.records_read << " records");
  const std::string msg = read.error->what();
  INFO("reader said: ", msg);
  CHECK(read.error->file() == file.string());
  CHECK(msg.find(reason) != std::string::npos);
  const VerifyReport report = verify_dataset(dir);
  REQUIRE(!report.ok());
  bool named = false;
  for (const VerifyFault& f : report.faults)
    if (f.file == file.string() && f.message.find(reason) != std::string::npos) named = true;
  CHECK_MESSAGE(named, "verify said: " << report.faults[0].message);
}

// For files that could block an open() (FIFOs): the same check in a child process under a
// watchdog, so that a hang fails the test instead of stalling it.
void expect_refused_without_hanging(const fs::path& dir, const std::string& reason) {
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::alarm(10);
    const ReadOutcome read = read_and_compare(dir, kRecords);
    if (!read.error) ::_exit(3);
    ::_exit(std::string(read.error->what()).find(reason) != std::string::npos ? 0 : 4);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  INFO("child status ", status);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
}

TEST_CASE("shard names that leave the dataset directory are refused, never followed") {
  Fixture fx;
  const std::string name0 = fx.manifest.shards[0].name;
  fs::create_directories(fx.dir / "sub");
  fs::copy_file(fx.shard0(), fx.dir / "sub" / name0);
  fs::copy_file(fx.shard0(), fx.dir / ("." + name0));
  const std::vector<std::string> hostile = {
      (fx.outside / name0).string(),  // absolute path to a valid copy
      "../outside/" + name0,          // relative path to the same copy
      "../ds/" + name0,               // leads back inside, still not a plain name
      "sub/" + name0,                 // a subdirectory
      "." + name0,                    // hidden
      "..",
      ".",
      "",
      "manifest.json",
      "a\\b",
      std::string("shard\n0"),
      std::string(300, 'x'),
  };
  for (const std::string& name : hostile) {
    INFO("shard name: '", name, "'");
    Manifest m = fx.manifest;
    m.shards[0].name = name;
    fx.put_manifest(m);
    expect_refused(fx.dir, fx.dir / "manifest.json", "not a plain file name");
    CHECK_THROWS_AS(Manifest::parse(m.serialize(), "m"), Error);
  }
}

TEST_CASE("links and special files in place of dataset files are refused") {
  Fixture fx;
  const fs::path shard = fx.shard0();
  SUBCASE("shard is a symbolic link to a valid copy outside") {
    fs::remove(shard);
    fs::create_symlink(fx.outside / fx.manifest.shards[0].name, shard);
    expect_refused(fx.dir, shard, "symbolic link");
  }
  SUBCASE("shard is a symbolic link to /dev/zero") {
    fs::remove(shard);
    fs::create_symlink("/dev/zero", shard);
    expect_refused(fx.dir, shard, "symbolic link");
  }
  SUBCASE("shard is a directory") {
    fs::remove(shard);
    fs::create_directory(shard);
    expect_refused(fx.dir, shard, "not a regular file");
  }
  SUBCASE("shard is a FIFO") {
    fs::remove(shard);
    REQUIRE(::mkfifo(shard.c_str(), 0644) == 0);
    expect_refused_without_hanging(fx.dir, "not a regular file");
  }
  SUBCASE("manifest is a symbolic link to a valid copy outside") {
    fs::remove(fx.dir / "manifest.json");
    fs::create_symlink(fx.outside / "manifest.json", fx.dir / "manifest.json");
    expect_refused(fx.dir, fx.dir / "manifest.json", "symbolic link");
  }
  SUBCASE("manifest is a FIFO") {
    fs::remove(fx.dir / "manifest.json");
    REQUIRE(::mkfifo((fx.dir / "manifest.json").c_str(), 0644) == 0);
    expect_refused_without_hanging(fx.dir, "not a regular file");
  }
  SUBCASE("manifest is a directory") {
    fs::remove(fx.dir / "manifest.json");
    fs::create_directory(fx.dir / "manifest.json");
    expect_refused(fx.dir, fx.dir / "manifest.json", "not a regular file");
  }
}

TEST_CASE("manifest counts that overflow or disagree with the shards are refused") {
  Fixture fx;
  const fs::path mpath = fx.dir / "manifest.json";
  SUBCASE("records beyond the format's limit") {
    Manifest m = fx.manifest;
    m.shards[0].records = uint64_t{1} << 60;
    fx.put_manifest(m);
    expect_refused(fx.dir, mpath, "out of range");
  }
  SUBCASE("records whose sum overflows") {
    Manifest m = fx.manifest;
    for (ShardEntry& s : m.shards) s.records = (uint64_t{1} << 48) - 1;
    fx.put_manifest(m);
    expect_refused(fx.dir, mpath, "overflows");
  }
  SUBCASE("bytes beyond the format's limit") {
    Manifest m = fx.manifest;
    m.shards[0].bytes = UINT64_MAX;
    fx.put_manifest(m);
    expect_refused(fx.dir, mpath, "out of range");
  }
  SUBCASE("a total that is not the sum") {
    fx.edit_manifest("\"records\":100,", "\"records\":99,");
    expect_refused(fx.dir, mpath, "not the sum");
  }
  SUBCASE("a number too large for 64 bits") {
    fx.edit_manifest("\"records\":100,", "\"records\":100000000000000000000000,");
    expect_refused(fx.dir, mpath, "not valid JSON");
  }
  SUBCASE("a negative count") {
    fx.edit_manifest("\"records\":100,", "\"records\":-100,");
    expect_refused(fx.dir, mpath, "mistyped");
  }
  SUBCASE("a key given twice (the first value would win silently)") {
    fx.edit_manifest("\"records\":100,", "\"records\":100,\"records\":100,");
    expect_refused(fx.dir, mpath, "\"records\" appears twice");
  }
  SUBCASE("a key given twice inside a schema entry") {
    fx.edit_manifest("{\"name\":\"input_ids\",", "{\"name\":\"input_ids\",\"name\":\"x\",");
    expect_refused(fx.dir, mpath, "appears twice");
  }
  SUBCASE("a shard listed twice") {
    Manifest m = fx.manifest;
    m.shards.push_back(m.shards[0]);
    fx.put_manifest(m);
    expect_refused(fx.dir, mpath, "listed twice");
  }
  SUBCASE("more records than the shard holds") {
    Manifest m = fx.manifest;
    m.shards[0].records += 1;
    fx.put_manifest(m);
    expect_refused(fx.dir, fx.shard0(), "manifest says");
  }
  SUBCASE("a size larger than the file") {
    Manifest m = fx.manifest;
    m.shards[0].bytes += 4096;
    fx.put_manifest(m);
    expect_refused(fx.dir, fx.shard0(), "manifest says");
  }
  SUBCASE("records_per_block zero") {
    fx.edit_manifest("\"records_per_block\":8,", "\"records_per_block\":0,");
    expect_refused(fx.dir, mpath, "records_per_block");
  }
  SUBCASE("records_per_block times record size beyond 1 GiB") {
    fx.edit_manifest("\"records_per_block\":8,", "\"records_per_block\":4294967295,");
    expect_refused(fx.dir, mpath, "records_per_block");
  }
  SUBCASE("records_per_block whose product with the record size wraps to a small number") {
    // (2^62 + 8) * 36 = 9 * 2^64 + 288, i.e. 288 modulo 2^64; as uint32 the value reads 8.
    fx.edit_manifest("\"records_per_block\":8,",
                     "\"records_per_block\":" + std::to_string((uint64_t{1} << 62) + 8) + ",");
    expect_refused(fx.dir, mpath, "records_per_block");
  }
}

TEST_CASE("schemas whose record size overflows are refused") {
  Fixture fx;
  const fs::path mpath = fx.dir / "manifest.json";
  const std::string field = "{\"name\":\"input_ids\",\"dtype\":\"u16\",\"shape\":[12]}";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"{\"name\":\"input_ids\",\"dtype\":\"u16\",\"shape\":[4294967297]}", "shape dimension"},
      {"{\"name\":\"input_ids\",\"dtype\":\"u16\",\"shape\":[18446744073709551615]}",
       "shape dimension"},
      {"{\"name\":\"input_ids\",\"dtype\":\"i64\",\"shape\":[65536,65536,65536,65536]}",
       "too large"},
      {"{\"name\":\"input_ids\",\"dtype\":\"i64\",\"shape\":[8388608]}, "
       "{\"name\":\"b\",\"dtype\":\"i64\",\"shape\":[8388608]}",
       "record size exceeds"},
      {"{\"name\":\"input_ids\",\"dtype\":\"u16\",\"shape\":[0]}", "shape dimension"},
      {"{\"name\":\"input_ids\",\"dtype\":\"u128\",\"shape\":[12]}", "unknown dtype"},
      {"{\"name\":\"input_ids\",\"dtype\":\"u16\",\"shape\":[-12]}", "mistyped"},
      {"{\"name\":\"../x\",\"dtype\":\"u16\",\"shape\":[12]}", "invalid field name"},
  };
  for (const auto& c : cases) {
    INFO("schema field: ", c.first);
    fx.edit_manifest(field, c.first);
    expect_refused(fx.dir, mpath, c.second);
  }
  // The same limits hold for the schema text of a shard header.
  CHECK_THROWS_AS(Schema::parse("a:u8[4294967296]"), Error);
  CHECK_THROWS_AS(Schema::parse("a:i64[65536,65536,65536,65536]"), Error);
  CHECK_THROWS_AS(Schema::parse("a:u8[67108864];b:u8[1]"), Error);
  CHECK_THROWS_AS(Schema::parse("a:u8[]]"), Error);
  CHECK_THROWS_AS(Schema::parse(""), Error);
}

TEST_CASE("shard headers, indexes and footers with hostile fields are refused") {
  Fixture fx;
  const fs::path shard = fx.shard0();
  const uint64_t size = fx.manifest.shards[0].bytes;
  using format::store_le;
  auto footer = [&](unsigned char* p) { return p + size - format::kFooterSize; };
  auto index_offset = [&](unsigned char* p) { return format::load_le(footer(p), 8); };

  SUBCASE("record count beyond the file, manifest agreeing") {
    fx.craft_shard0([](unsigned char* p, std::string&) { store_le(p + 24, uint64_t{1} << 47, 8); },
                    uint64_t{1} << 47);
    expect_refused(fx.dir, shard, "out of range");
  }
  SUBCASE("index offset past the end of the file") {
    fx.craft_shard0([&](unsigned char* p, std::string&) { store_le(footer(p), size + 4096, 8); });
    expect_refused(fx.dir, shard, "index offset");
  }
  SUBCASE("index offset near 2^64") {
    fx.craft_shard0(
        [&](unsigned char* p, std::string&) { store_le(footer(p), UINT64_MAX - 8, 8); });
    expect_refused(fx.dir, shard, "index offset");
  }
  SUBCASE("index offset zero") {
    fx.craft_shard0([&](unsigned char* p, std::string&) { store_le(footer(p), 0, 8); });
    expect_refused(fx.dir, shard, "index offset");
  }
  SUBCASE("an index entry pointing past the file") {
    fx.craft_shard0([&](unsigned char* p, std::string&) {
      unsigned char* e = p + index_offset(p);
      store_le(e, size * 2, 8);
      store_le(e + 8, 0xffffffff, 4);
    });
    expect_refused(fx.dir, shard, "outside the block area");
  }
  SUBCASE("an index entry whose size reaches past the index") {
    fx.craft_shard0(
        [&](unsigned char* p, std::string&) { store_le(p + index_offset(p) + 8, 0xffffffff, 4); });
    expect_refused(fx.dir, shard, "outside the block area");
  }
  SUBCASE("schema size beyond the file") {
    fx.craft_shard0([](unsigned char* p, std::string&) { store_le(p + 12, 0xffffffff, 4); });
    expect_refused(fx.dir, shard, "schema size");
  }
  SUBCASE("records_per_block differing from the manifest") {
    fx.craft_shard0([](unsigned char* p, std::string&) { store_le(p + 20, 0, 4); });
    expect_refused(fx.dir, shard, "records_per_block");
  }
  SUBCASE("record size disagreeing with the schema") {
    fx.craft_shard0([&](unsigned char* p, std::string&) { store_le(p + 16, 4, 4); });
    expect_refused(fx.dir, shard, "record size");
  }
  SUBCASE("shard format version 2") {
    fx.craft_shard0([](unsigned char* p, std::string&) { store_le(p + 8, 2, 2); });
    expect_refused(fx.dir, shard, "version 2 is not supported");
  }
  SUBCASE("shard format version 0") {
    fx.craft_shard0([](unsigned char* p, std::string&) { store_le(p + 8, 0, 2); });
    expect_refused(fx.dir, shard, "version 0 is not supported");
  }
  SUBCASE("an unknown block filter") {
    fx.craft_shard0([](unsigned char* p, std::string&) { p[32] = 7; });
    expect_refused(fx.dir, shard, "filter");
  }
  SUBCASE("an unknown block encoding") {
    fx.craft_shard0([&](unsigned char* p, std::string&) { p[index_offset(p) + 12] = 9; });
    expect_refused(fx.dir, shard, "encoding");
  }
  SUBCASE("non-zero reserved bytes") {
    fx.craft_shard0([](unsigned char* p, std::string&) { p[35] = 1; });
    expect_refused(fx.dir, shard, "reserved");
  }
}

TEST_CASE("mismatched manifest versions and formats are refused") {
  Fixture fx;
  const fs::path mpath = fx.dir / "manifest.json";
  SUBCASE("version 3") {
    fx.edit_manifest("\"format_version\":2,", "\"format_version\":3,");
    expect_refused(fx.dir, mpath, "format_version 3 is not supported");
    try {
      Manifest::load(fx.dir);
      FAIL("accepted");
    } catch (const Error& e) {
      CHECK(e.code() == ErrorCode::kUnsupported);
    }
  }
  SUBCASE("version 0") {
    fx.edit_manifest("\"format_version\":2,", "\"format_version\":0,");
    expect_refused(fx.dir, mpath, "format_version 0 is not supported");
  }
  SUBCASE("version as a string") {
    fx.edit_manifest("\"format_version\":2,", "\"format_version\":\"2\",");
    expect_refused(fx.dir, mpath, "format_version");
  }
  SUBCASE("another format") {
    fx.edit_manifest("\"format\":\"shardkit\",", "\"format\":\"tfrecord\",");
    expect_refused(fx.dir, mpath, "\"format\"");
  }
}

}  // namespace
}  // namespace shardkit::reliability
