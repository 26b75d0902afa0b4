// shard-inspect info/verify/dump on a dataset written by the library, read back with simdjson.
#include <doctest/doctest.h>
#include <simdjson.h>

#include <fstream>
#include <sstream>

#include "core/dataset.h"
#include "core/dataset_writer.h"
#include "core/error.h"
#include "test_util.h"

using namespace shardkit;
using shardkit::testing::TempDir;

TEST_CASE("info, dump and verify describe what was written") {
  TempDir tmp("cli");
  const Schema schema(
      {{"input_ids", DType::kU16, {3}}, {"labels", DType::kI64, {}}, {"score", DType::kF32, {}}});
  const size_t n = 257;
  {
    WriterOptions opt;
    opt.block_bytes = 200;
    opt.shard_bytes = 300;
    DatasetWriter w(tmp / "ds", schema, opt);
    for (size_t i = 0; i < n; ++i) {
      unsigned char rec[18];
      uint16_t ids[3] = {static_cast<uint16_t>(i), static_cast<uint16_t>(i * 3), 65535};
      int64_t label = static_cast<int64_t>(i % 5) - 2;
      float score = static_cast<float>(i) / 4.0f;
      std::memcpy(rec, ids, 6);
      std::memcpy(rec + 6, &label, 8);
      std::memcpy(rec + 14, &score, 4);
      w.append(rec);
    }
    w.set_metadata("label_map", "[\"a\",\"b\"]");
    w.finish();
  }
  const std::string tool = testing::tool_path("shard-inspect");
  std::string out;
  REQUIRE(testing::run_command(tool + " info --json " + (tmp / "ds").string(), &out) == 0);
  simdjson::dom::parser parser;
  simdjson::dom::element info = parser.parse(out);
  CHECK(uint64_t(info["records"]) == n);
  CHECK(uint64_t(info["shards"]) > 1);
  CHECK(uint64_t(info["bytes_on_disk"]) > 0);
  CHECK(uint64_t(info["uncompressed_bytes"]) == n * 18);  // 6 + 8 + 4 bytes a record
  simdjson::dom::array fields = info["schema"];
  CHECK(fields.size() == 3);
  CHECK(std::string_view(fields.at(0)["name"]) == "input_ids");
  CHECK(std::string_view(fields.at(0)["dtype"]) == "u16");
  CHECK(uint64_t(fields.at(0)["shape"].at(0)) == 3);
  CHECK(std::string_view(info["metadata"]["label_map"].at(1)) == "b");

  REQUIRE(testing::run_command(
              tool + " dump --json --from 250 --count 100 " + (tmp / "ds").string(), &out) == 0);
  std::istringstream lines(out);
  std::string line;
  size_t i = 250;
  simdjson::dom::parser line_parser;
  while (std::getline(lines, line)) {
    simdjson::dom::element rec = line_parser.parse(line);
    CHECK(uint64_t(rec["index"]) == i);
    CHECK(uint64_t(rec["input_ids"].at(0)) == i);
    CHECK(uint64_t(rec["input_ids"].at(1)) == i * 3);
    CHECK(uint64_t(rec["input_ids"].at(2)) == 65535);
    CHECK(int64_t(rec["labels"]) == static_cast<int64_t>(i % 5) - 2);
    CHECK(double(rec["score"]) == doctest::Approx(i / 4.0));
    ++i;
  }
  CHECK(i == n);  // stops at the end of the dataset

  CHECK(testing::run_command(tool + " verify " + (tmp / "ds").string(), &out) == 0);
  CHECK(out.find("OK") != std::string::npos);
  // A negative count or index is refused, not read as the largest one.
  for (const std::string& args : {" dump " + (tmp / "ds").string() + " --count -1",
                                  " dump " + (tmp / "ds").string() + " --from -2",
                                  " order " + (tmp / "ds").string() + " --epoch -1"}) {
    CAPTURE(args);
    CHECK(testing::run_command(tool + args, &out) != 0);
    CHECK(out.find("must be a whole number, 0 or more, not -") != std::string::npos);
  }
  CHECK(testing::run_command(tool + " info " + (tmp / "nope").string(), &out) == 1);
  CHECK(out.find("no such dataset: the path does not exist") != std::string::npos);
}

TEST_CASE("verify of a directory that holds no dataset says so, as info does") {
  TempDir tmp("cli-plain");
  const std::string tool = testing::tool_path("shard-inspect");
  std::string out;
  // Not a damaged dataset: verify says what info says (not FAULT lines), and fails.
  std::filesystem::create_directories(tmp / "plain");
  std::ofstream(tmp / "plain" / "notes.txt") << "not a dataset\n";
  REQUIRE(testing::run_command(tool + " info " + (tmp / "plain").string(), &out) == 1);
  CHECK(out.find("not a shardkit dataset (no manifest.json)") != std::string::npos);
  for (const char* json : {"", " --json"}) {
    CHECK(testing::run_command(tool + " verify" + json + " " + (tmp / "plain").string(), &out) ==
          1);
    CHECK_MESSAGE(out.find("not a shardkit dataset (no manifest.json)") != std::string::npos, out);
    CHECK_MESSAGE(out.find("FAULT") == std::string::npos, out);
    CHECK_MESSAGE(out.find("fault(s)") == std::string::npos, out);
  }
  CHECK(testing::run_command(tool + " verify " + (tmp / "nope").string(), &out) == 1);
  CHECK(out.find("no such dataset: the path does not exist") != std::string::npos);
}

namespace {

// A dataset of `n` one-byte records at `dir`.
void write_bytes_dataset(const std::filesystem::path& dir, size_t n) {
  DatasetWriter w(dir, Schema({{"b", DType::kU8, {}}}), WriterOptions{});
  for (size_t i = 0; i < n; ++i) {
    const unsigned char b = static_cast<unsigned char>(i);
    w.append(&b);
  }
  w.finish();
}

}  // namespace

// The path of a dataset's manifest, as a browser's or a file manager's address gives it, was
// read as the dataset's directory: "ds/manifest.json: not a shardkit dataset: a dataset is a
// directory, this is a file", naming no directory to give instead. URLs: remote_http_test.
TEST_CASE("info of a dataset's manifest.json names the dataset's directory to give instead") {
  TempDir tmp("cli-manifest");
  write_bytes_dataset(tmp / "ds", 7);
  const std::string tool = testing::tool_path("shard-inspect");
  const std::string ds = (tmp / "ds").string();
  std::string out;
  for (const std::string& given : {ds + "/manifest.json", ds + "/manifest.json/"}) {
    CHECK(testing::run_command(tool + " info " + given, &out) == 1);
    CHECK_MESSAGE(out.find(given +
                           ": names the dataset's manifest.json, not the dataset: give "
                           "the dataset's directory, " +
                           ds + "\n") != std::string::npos,
                  out);
  }
  CHECK(testing::run_command("cd " + ds + " && " + tool + " info manifest.json", &out) == 1);
  CHECK_MESSAGE(out.find("give the dataset's directory, .\n") != std::string::npos, out);
  CHECK(testing::run_command("cd " + ds + " && " + tool + " info .", &out) == 0);
  // The same refusal from the library, whatever opens the dataset.
  const std::string hint = "give the dataset's directory, " + ds;
  CHECK_THROWS_WITH_AS(Dataset::open(tmp / "ds" / "manifest.json"), doctest::Contains(hint.c_str()),
                       Error);
  // A dataset in a directory of that name is a dataset, not a manifest.
  write_bytes_dataset(tmp / "manifest.json", 5);
  CHECK(Dataset::open(tmp / "manifest.json").size() == 5);
  REQUIRE(testing::run_command(tool + " info " + (tmp / "manifest.json").string(), &out) == 0);
}

TEST_CASE("verify notes .shard files the manifest does not list, and still passes") {
  TempDir tmp("cli-unlisted");
  const Schema schema({{"input_ids", DType::kU16, {3}}});
  {
    WriterOptions opt;
    opt.block_bytes = 60;
    opt.shard_bytes = 120;
    DatasetWriter w(tmp / "ds", schema, opt);
    for (uint16_t i = 0; i < 40; ++i) {
      const uint16_t ids[3] = {i, i, i};
      w.append(reinterpret_cast<const unsigned char*>(ids));
    }
    w.finish();
  }
  // A shard of the dataset copied in under another name, and a file that is no shard.
  std::filesystem::copy_file(tmp / "ds" / "shard-00000.shard", tmp / "ds" / "shard-extra.shard");
  std::ofstream(tmp / "ds" / "README.txt") << "notes\n";
  const std::string tool = testing::tool_path("shard-inspect"), dir = (tmp / "ds").string();
  std::string out;
  CHECK(testing::run_command(tool + " verify " + dir, &out) == 0);
  CHECK_MESSAGE(out.find("NOTE shard-extra.shard is in the directory but not in manifest.json: "
                         "no reader reads it") != std::string::npos,
                out);
  CHECK(out.find("README.txt") == std::string::npos);
  CHECK(out.find("OK:") != std::string::npos);
  CHECK(testing::run_command(tool + " verify --quiet " + dir, &out) == 0);
  CHECK(out.find("NOTE") == std::string::npos);
  REQUIRE(testing::run_command(tool + " verify --json --progress never " + dir, &out) == 0);
  simdjson::dom::parser parser;
  simdjson::dom::element report = parser.parse(out);
  simdjson::dom::array unlisted = report["unlisted_shard_files"];
  REQUIRE(unlisted.size() == 1);
  CHECK(std::string_view(unlisted.at(0)) == "shard-extra.shard");
}

TEST_CASE("report refuses the mixture's step options without --mixture") {
  TempDir tmp("cli-report");
  const std::string tool = testing::tool_path("shard-inspect");
  std::string out;
  // report's --batch-size and --max-samples shape a mixture's steps: without one, refused.
  {
    const Schema schema({{"input_ids", DType::kU16, {4}}, {"length", DType::kU16, {}}});
    DatasetWriter w(tmp / "ds", schema, WriterOptions{});
    const uint16_t rec[5] = {1, 2, 3, 0, 3};
    for (int i = 0; i < 20; ++i) w.append(reinterpret_cast<const unsigned char*>(rec));
    w.set_info(DatasetInfo::infer(schema));
    w.finish();
  }
  const std::string html = (tmp / "x.html").string();
  CHECK(testing::run_command(tool + " report " + (tmp / "ds").string() + " -o " + html +
                                 " --batch-size 7 --max-samples 9",
                             &out) != 0);
  CHECK_MESSAGE(out.find("--batch-size and --max-samples set a mixture's steps: they need "
                         "--mixture") != std::string::npos,
                out);
  CHECK(!std::filesystem::exists(html));
  CHECK_MESSAGE(
      testing::run_command(tool + " report " + (tmp / "ds").string() + " -o " + html, &out) == 0,
      out);
  CHECK(std::filesystem::exists(html));
}

TEST_CASE("--json stays valid JSON when a path is not UTF-8: each such byte becomes U+FFFD") {
  // A Latin-1 directory name, "lat" + 0xE9, as README's --json rule writes it: "lat" + U+FFFD
  // (EF BF BD in UTF-8).
  TempDir tmp("cli-latin1");
  const std::string dir = (tmp / "lat\xE9").string();
  const std::string shown = (tmp / "lat\xEF\xBF\xBD").string();
  {
    const Schema schema({{"input_ids", DType::kU16, {4}}, {"length", DType::kU16, {}}});
    WriterOptions opt;
    opt.block_bytes = 200;
    DatasetWriter w(dir, schema, opt);
    for (uint16_t i = 0; i < 300; ++i) {
      const uint16_t rec[5] = {i, 2, 3, 0, 3};
      w.append(reinterpret_cast<const unsigned char*>(rec));
    }
    w.set_info(DatasetInfo::infer(schema));
    w.finish();
  }
  const std::string tool = testing::tool_path("shard-inspect");
  const std::string quoted = "'" + dir + "'";
  std::string out;
  simdjson::dom::parser parser;
  REQUIRE(testing::run_command(tool + " info --json " + quoted, &out) == 0);
  simdjson::dom::element info;
  REQUIRE_MESSAGE(parser.parse(out).get(info) == simdjson::SUCCESS, out);
  CHECK(std::string_view(info["path"]) == shown);

  // A damaged shard: the fault report survives the path (before: a raw exception, no report).
  const std::string shard = dir + "/shard-00000.shard";
  std::string bytes = testing::read_file(shard);
  bytes[bytes.size() / 2] ^= 0x55;
  testing::write_file(shard, bytes);
  CHECK(testing::run_command(tool + " verify --json --progress never " + quoted, &out) == 1);
  simdjson::dom::element verify;
  REQUIRE_MESSAGE(parser.parse(out).get(verify) == simdjson::SUCCESS, out);
  CHECK_FALSE(bool(verify["ok"]));
  simdjson::dom::array faults = verify["faults"];
  REQUIRE(faults.size() >= 1);
  for (simdjson::dom::element f : faults)
    CHECK(std::string_view(f["file"]) == shown + "/shard-00000.shard");

  // An option's value, in --print-options.
  REQUIRE(testing::run_command(tool + " order " + quoted + " --print-options --cache-dir '" +
                                   (tmp / "c\xFF").string() + "'",
                               &out) == 0);
  simdjson::dom::element options;
  REQUIRE_MESSAGE(parser.parse(out).get(options) == simdjson::SUCCESS, out);
  CHECK(std::string_view(options["cache_dir"]) == (tmp / "c\xEF\xBF\xBD").string());
}
