// The converter's guarantees: byte-identical output for any thread count, --part/merge equal to
// a single run, no overwrite without --force, and every kind of bad input reported with its
// file and line (fail) or counted (skip), leaving nothing that looks like a dataset.
#include <doctest/doctest.h>

#include <algorithm>
#include <sstream>

#include "core/manifest.h"
#include "shardify_util.h"
#include "tokenizer/tokenizer.h"

using namespace shardkit::testing;
namespace fs = std::filesystem;

namespace {

// Documents made by combining fixture sentences, enough for many batches, blocks and shards.
std::string many_docs(size_t count, size_t seed) {
  const auto lines = nonblank_lines(read_file(shardify_data("docs.txt")));
  std::string out;
  for (size_t i = 0; i < count; ++i) {
    size_t n = 1 + (i * 7 + seed) % 3;
    for (size_t k = 0; k < n; ++k)
      out += lines[(i * 31 + k * 17 + seed) % lines.size()] + (k + 1 < n ? " " : "");
    out += "\n";
  }
  return out;
}

void require_identical_dirs(const fs::path& a, const fs::path& b) {
  auto fa = sorted_names(a), fb = sorted_names(b);
  REQUIRE(fa == fb);
  for (const auto& name : fa) {
    INFO(name);
    REQUIRE(read_file(a / name) == read_file(b / name));
  }
}

bool same_records(const std::vector<Rec>& a, const std::vector<Rec>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].input_ids != b[i].input_ids || a[i].length != b[i].length ||
        a[i].labels != b[i].labels || a[i].token_type_ids != b[i].token_type_ids)
      return false;
  return true;
}

std::string tok() { return " --tokenizer " + q(bert_json()); }

}  // namespace

TEST_CASE("output is byte-identical for 1, 2 and 3 threads (lm, cls, qa)") {
  TempDir tmp("det");
  write_file(tmp / "corpus.txt", many_docs(4000, 1));
  const std::string small_blocks = " --block-size 8192 --shard-size 10000";
  for (unsigned t : {1u, 2u, 3u})
    shardify_ok("--input " + q(tmp / "corpus.txt") + " --task lm --doc-sep line --max-len 64" +
                small_blocks + tok() + " --threads " + std::to_string(t) + " --out " +
                q(tmp / ("lm" + std::to_string(t))));
  REQUIRE(sorted_names(tmp / "lm1").size() > 3);  // several shards
  require_identical_dirs(tmp / "lm1", tmp / "lm2");
  require_identical_dirs(tmp / "lm1", tmp / "lm3");

  for (unsigned t : {1u, 3u}) {
    shardify_ok("--input " + q(shardify_data("reviews.csv")) + " --task cls --max-len 16" + tok() +
                " --threads " + std::to_string(t) + " --out " +
                q(tmp / ("cls" + std::to_string(t))));
    shardify_ok("--input " + q(shardify_data("squad_v2.json")) +
                " --task qa --max-len 40 --doc-stride 8 "
                "--max-query-len 16" +
                tok() + " --threads " + std::to_string(t) + " --out " +
                q(tmp / ("qa" + std::to_string(t))));
  }
  require_identical_dirs(tmp / "cls1", tmp / "cls3");
  require_identical_dirs(tmp / "qa1", tmp / "qa3");
}

TEST_CASE("--part i/N then merge is byte-identical to a single run") {
  TempDir tmp("part");
  fs::create_directories(tmp / "in");
  for (int i = 0; i < 5; ++i)
    write_file(tmp / "in" / ("f" + std::to_string(i) + ".txt"), many_docs(300 + 50 * i, i));
  // Small blocks and shards, so that blocks and shards straddle the parts' boundaries.
  const std::string common = " --input " + q(tmp / "in") +
                             " --task lm --doc-sep line --block-size 4096 --shard-size 6000" +
                             " --zstd-level 5" + tok();
  shardify_ok(common + " --max-len 48 --threads 3 --out " + q(tmp / "single"));
  for (int p = 0; p < 3; ++p)
    shardify_ok(common + " --max-len 48 --part " + std::to_string(p) + "/3 --threads 2 --out " +
                q(tmp / ("p" + std::to_string(p))));
  // Parts in any order on the command line.
  std::string out;
  shardify_ok("merge --threads 2 " + q(tmp / "merged") + " " + q(tmp / "p2") + " " + q(tmp / "p0") +
                  " " + q(tmp / "p1"),
              &out);
  REQUIRE(sorted_names(tmp / "single").size() > 4);
  REQUIRE(same_records(read_records(tmp / "single"), read_records(tmp / "merged")));
  auto single = shardkit::Manifest::load(tmp / "single");
  auto merged = shardkit::Manifest::load(tmp / "merged");
  CHECK(single.info == merged.info);
  REQUIRE(single.info.stats);
  CHECK(single.info.stats->records == single.record_count());
  // Every shard and the manifest, byte for byte: the merged dataset is the single run's.
  require_identical_dirs(tmp / "single", tmp / "merged");
  REQUIRE(run_command(inspect_bin() + " verify " + q(tmp / "merged"), &out) == 0);

  SUBCASE("a corrupt block in a part names its shard and block, and publishes nothing") {
    const fs::path shard = tmp / "p1" / "shard-00000.shard";
    std::string bytes = read_file(shard);
    // The footer's first field is index_offset; the first index entry's, block 0's offset.
    namespace f = shardkit::format;
    const auto* u = reinterpret_cast<const unsigned char*>(bytes.data());
    const uint64_t index_offset = f::load_le(u + bytes.size() - 40, 8);
    bytes[f::load_le(u + index_offset, 8) + 5] ^= 0x40;
    write_file(shard, bytes);
    CHECK(shardify("merge " + q(tmp / "m1") + " " + q(tmp / "p0") + " " + q(tmp / "p1") + " " +
                       q(tmp / "p2"),
                   &out) != 0);
    INFO(out);
    CHECK(out.find("shard-00000.shard") != std::string::npos);
    CHECK(out.find("block 0") != std::string::npos);
    CHECK(!fs::exists(tmp / "m1"));
  }
  SUBCASE("an incomplete set of parts is refused") {
    CHECK(shardify("merge " + q(tmp / "m2") + " " + q(tmp / "p0") + " " + q(tmp / "p1"), &out) !=
          0);
    CHECK(out.find("2 parts of a 3-part") != std::string::npos);
    CHECK(!fs::exists(tmp / "m2"));
  }
  SUBCASE("parts of different conversions are refused") {
    shardify_ok(common + " --max-len 32 --part 1/3 --out " + q(tmp / "other1"));
    CHECK(shardify("merge " + q(tmp / "m3") + " " + q(tmp / "p0") + " " + q(tmp / "other1") + " " +
                       q(tmp / "p2"),
                   &out) != 0);
    CHECK(!fs::exists(tmp / "m3"));
  }
  SUBCASE("merge does not overwrite without --force") {
    CHECK(shardify("merge " + q(tmp / "merged") + " " + q(tmp / "p0") + " " + q(tmp / "p1") + " " +
                       q(tmp / "p2"),
                   &out) != 0);
    shardify_ok("merge --force " + q(tmp / "merged") + " " + q(tmp / "p0") + " " + q(tmp / "p1") +
                " " + q(tmp / "p2"));
  }
}

TEST_CASE("--part i/3 over 2 files: the empty part says why, and --allow-empty writes it") {
  // Parts take the files [i*F/N, (i+1)*F/N): with F = 2 and N = 3, part 0 gets [0, 0).
  TempDir tmp("part_empty");
  fs::create_directories(tmp / "in");
  write_file(tmp / "in" / "a.jsonl", "{\"text\":\"a\"}\n");
  write_file(tmp / "in" / "b.jsonl", "{\"text\":\"b\"}\n");
  const std::string common = " --input " + q(tmp / "in") + " --task lm --max-len 16" + tok();
  std::string out;
  CHECK(shardify(common + " --part 0/3 --out " + q(tmp / "p0"), &out) != 0);
  CHECK_MESSAGE(out.find("part 0/3 has no input file") != std::string::npos, out);
  CHECK_MESSAGE(out.find("2 input files by count") != std::string::npos, out);
  CHECK_MESSAGE(out.find("--allow-empty") != std::string::npos, out);
  CHECK_MESSAGE(out.find("--text-field") == std::string::npos, out);
  CHECK(!fs::exists(tmp / "p0"));
  shardify_ok(common + " --out " + q(tmp / "single"));
  for (int p = 0; p < 3; ++p)
    shardify_ok(common + " --allow-empty --part " + std::to_string(p) + "/3 --out " +
                q(tmp / ("p" + std::to_string(p))));
  shardify_ok("merge " + q(tmp / "merged") + " " + q(tmp / "p0") + " " + q(tmp / "p1") + " " +
              q(tmp / "p2"));
  CHECK(same_records(read_records(tmp / "single"), read_records(tmp / "merged")));
}

TEST_CASE("--part auto reads the Slurm array's task from the environment, as i/N would") {
  TempDir tmp("partauto");
  fs::create_directories(tmp / "in");
  for (int i = 0; i < 4; ++i)
    write_file(tmp / "in" / ("f" + std::to_string(i) + ".txt"), many_docs(100, i));
  const std::string common = " --input " + q(tmp / "in") + " --task lm --doc-sep line" + tok();
  shardify_ok(common + " --part 1/2 --out " + q(tmp / "by-hand"));
  // sbatch --array=1-2: the second task is part 1/2.
  const std::string slurm =
      "env -u JOB_COMPLETION_INDEX SLURM_ARRAY_TASK_ID=2 SLURM_ARRAY_TASK_MIN=1 "
      "SLURM_ARRAY_TASK_MAX=2 SLURM_ARRAY_TASK_COUNT=2 ";
  std::string out;
  REQUIRE(run_command(slurm + shardify_bin() + common + " --part auto --out " + q(tmp / "auto"),
                      &out) == 0);
  require_identical_dirs(tmp / "by-hand", tmp / "auto");
  // A Kubernetes Indexed Job's pod 1 of 2.
  REQUIRE(run_command("env -u SLURM_ARRAY_TASK_ID JOB_COMPLETION_INDEX=1 " + shardify_bin() +
                          common + " --part auto/2 --out " + q(tmp / "k8s"),
                      &out) == 0);
  require_identical_dirs(tmp / "by-hand", tmp / "k8s");
  // Outside any scheduler: an error naming the variables, and no dataset.
  CHECK(run_command("env -u SLURM_ARRAY_TASK_ID -u JOB_COMPLETION_INDEX " + shardify_bin() +
                        common + " --part auto --out " + q(tmp / "none"),
                    &out) != 0);
  CHECK(out.find("SLURM_ARRAY_TASK_ID") != std::string::npos);
  CHECK(!fs::exists(tmp / "none"));
}

TEST_CASE("--part out of 32-bit range, signed or padded is refused, never cut to another part") {
  TempDir tmp("partrange");
  write_file(tmp / "a.txt", many_docs(20, 0));
  const std::string common = " --input " + q(tmp / "a.txt") + " --task lm" + tok();
  // 4294967297 = 2^32 + 1 was cut to 1: "0/1", the whole input as one part.
  for (const std::string part :
       {"0/4294967297", "4294967296/4294967297", "0/18446744073709551617", "-1/4", "0/-4", "+0/4",
        " 0/4", "0/4 ", "0x0/4", "0/", "/4", "0", "1/1", "0/0"}) {
    INFO("--part '", part, "'");
    std::string out;
    const std::string name = "p" + std::to_string(std::hash<std::string>{}(part));
    CHECK(shardify(common + " --part '" + part + "' --out " + q(tmp / name), &out) != 0);
    CHECK(out.find("--part") != std::string::npos);
    CHECK(!fs::exists(tmp / name));
  }
  // The largest count that fits is accepted: its part 0 holds no file of one.
  std::string out;
  shardify(common + " --part 4294967294/4294967295 --allow-empty --out " + q(tmp / "last"), &out);
  CHECK(out.find("--part") == std::string::npos);
}

TEST_CASE("cls labels are the same in every part: the map comes from all inputs") {
  TempDir tmp("partlabels");
  fs::create_directories(tmp / "in");
  write_file(tmp / "in" / "a.jsonl", "{\"text\":\"good\",\"label\":\"pos\"}\n");
  write_file(tmp / "in" / "b.jsonl",
             "{\"text\":\"bad\",\"label\":\"neg\"}\n{\"text\":\"meh\",\"label\":\"mid\"}\n");
  const std::string common = " --input " + q(tmp / "in") + " --task cls --max-len 8" + tok();
  shardify_ok(common + " --out " + q(tmp / "single"));
  shardify_ok(common + " --part 0/2 --out " + q(tmp / "p0"));
  shardify_ok(common + " --part 1/2 --out " + q(tmp / "p1"));
  shardify_ok("merge " + q(tmp / "merged") + " " + q(tmp / "p0") + " " + q(tmp / "p1"));
  auto recs = read_records(tmp / "merged");
  REQUIRE(recs.size() == 3);
  CHECK(recs[0].labels == 2);  // mid, neg, pos
  CHECK(recs[1].labels == 1);
  CHECK(recs[2].labels == 0);
  CHECK(same_records(recs, read_records(tmp / "single")));
}

TEST_CASE("an existing dataset is not replaced without --force") {
  TempDir tmp("force");
  const std::string args = "--input " + q(shardify_data("docs.txt")) + " --doc-sep line" + tok() +
                           " --out " + q(tmp / "ds");
  shardify_ok(args + " --max-len 16");
  const std::string before = read_file(tmp / "ds" / "manifest.json");
  std::string out;
  CHECK(shardify(args + " --max-len 32", &out) != 0);
  CHECK(out.find("already exists") != std::string::npos);
  CHECK(read_file(tmp / "ds" / "manifest.json") == before);
  shardify_ok(args + " --max-len 32 --force");
  CHECK(read_file(tmp / "ds" / "manifest.json") != before);
}

TEST_CASE("--force replaces datasets and empty directories, never anything else") {
  TempDir tmp("force2");
  const std::string in = "--input " + q(shardify_data("docs.txt")) + tok() + " --max-len 16";
  // A folder of the user's files, and a regular file: refused, and left exactly as they were.
  fs::create_directories(tmp / "photos");
  write_file(tmp / "photos" / "a.jpg", "not a dataset");
  write_file(tmp / "notes.txt", "keep me");
  std::string out;
  CHECK(shardify(in + " --force --out " + q(tmp / "photos"), &out) != 0);
  CHECK_MESSAGE(out.find("not a shardkit dataset") != std::string::npos, out);
  CHECK(read_file(tmp / "photos" / "a.jpg") == "not a dataset");
  CHECK(shardify(in + " --force --out " + q(tmp / "notes.txt"), &out) != 0);
  CHECK_MESSAGE(out.find("not a directory") != std::string::npos, out);
  CHECK(read_file(tmp / "notes.txt") == "keep me");
  // merge checks the same before it links anything.
  shardify_ok(in + " --part 0/1 --out " + q(tmp / "p0"));
  CHECK(shardify("merge --force " + q(tmp / "photos") + " " + q(tmp / "p0"), &out) != 0);
  CHECK(read_file(tmp / "photos" / "a.jpg") == "not a dataset");
  // An empty directory is fine.
  fs::create_directories(tmp / "empty");
  shardify_ok(in + " --force --out " + q(tmp / "empty"));
  CHECK(fs::exists(tmp / "empty" / "manifest.json"));

  // A manifest.json that is not a dataset's (a web app's): refused, the folder kept whole.
  fs::create_directories(tmp / "webapp");
  write_file(tmp / "webapp" / "manifest.json", R"({"name": "my web app"})");
  write_file(tmp / "webapp" / "index.html", "<html>");
  CHECK(shardify(in + " --force --out " + q(tmp / "webapp"), &out) != 0);
  CHECK_MESSAGE(out.find("not a shardkit dataset") != std::string::npos, out);
  CHECK(read_file(tmp / "webapp" / "manifest.json") == R"({"name": "my web app"})");
  CHECK(read_file(tmp / "webapp" / "index.html") == "<html>");

  // A dataset that also holds a file of the user's, or a folder: refused, naming it.
  const std::string dataset_manifest = read_file(tmp / "empty" / "manifest.json");
  write_file(tmp / "empty" / "notes.txt", "mine");
  CHECK(shardify(in + " --force --out " + q(tmp / "empty"), &out) != 0);
  CHECK_MESSAGE(out.find("holds notes.txt") != std::string::npos, out);
  CHECK(read_file(tmp / "empty" / "notes.txt") == "mine");
  fs::remove(tmp / "empty" / "notes.txt");
  fs::create_directories(tmp / "empty" / "runs");
  CHECK(shardify(in + " --force --out " + q(tmp / "empty"), &out) != 0);
  CHECK_MESSAGE(out.find("holds runs") != std::string::npos, out);
  CHECK(fs::is_directory(tmp / "empty" / "runs"));
  CHECK(read_file(tmp / "empty" / "manifest.json") == dataset_manifest);
  fs::remove(tmp / "empty" / "runs");

  // "out/." names the dataset by its entry in its parent: replaced, nothing left inside it.
  shardify_ok(in + " --max-len 24 --force --out " + q(tmp / "empty" / "."));
  CHECK(read_file(tmp / "empty" / "manifest.json") != dataset_manifest);
  size_t entries = 0;
  for (const auto& e : fs::directory_iterator(tmp / "empty")) entries += e.exists();
  CHECK(entries == 2);  // the manifest and one shard
  for (const auto& e : fs::directory_iterator(tmp.path()))
    CHECK(e.path().filename().string().find(".partial-") == std::string::npos);

  // merge never replaces one of its own parts.
  const std::string part = read_file(tmp / "p0" / "manifest.json");
  CHECK(shardify("merge --force " + q(tmp / "p0") + " " + q(tmp / "p0"), &out) != 0);
  CHECK_MESSAGE(out.find("both a part and the output") != std::string::npos, out);
  CHECK(read_file(tmp / "p0" / "manifest.json") == part);
}

TEST_CASE("flags of another task or input format are refused, not ignored") {
  TempDir tmp("flags");
  write_file(tmp / "rows.jsonl", "{\"text\": \"a b\", \"label\": \"x\"}\n");
  const std::string in = "--input " + q(tmp / "rows.jsonl") + tok() + " --out " + q(tmp / "ds");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {" --doc-sep line", "--doc-sep is for text input: a jsonl input"},
      {" --no-quoting", "--no-quoting is for csv and tsv input"},
      {" --task cls --position-ids", "--position-ids is for --task lm, packed"},
      {" --task lm --no-pack --position-ids", "--position-ids is for --task lm, packed"},
      {" --task lm --labels x", "--labels is for --task cls and pair"},
      {" --task cls --doc-stride 8", "--doc-stride is for --task qa"},
      // At their default values too: given, they say the user expects them to matter.
      {" --task lm --label-field label", "--label-field is for --task cls and pair"},
      {" --task cls --pair-field text_pair", "--pair-field is for --task pair"},
      {" --task cls --context-field c", "--context-field is for --task qa"},
      // Named as given: --no-pack, not --pack.
      {" --task cls --no-pack", "--no-pack is for --task lm and sft"},
      {" --task cls --pack", "--pack is for --task lm and sft"},
      {" --task cls --position-ids=false", "--position-ids is for --task lm, packed"},
      {" --task sft --render-timeout 3", "--render-timeout is for --task sft with --chat-template"},
      {" --task lm --max-render-bytes 99999", "--max-render-bytes is for --task sft with"}};
  for (const auto& [flags, message] : cases) {
    std::string out;
    CHECK_MESSAGE(shardify(in + flags, &out) != 0, flags);
    CHECK_MESSAGE(out.find(message) != std::string::npos, flags, ": ", out);
    CHECK(!fs::exists(tmp / "ds"));
  }
}

TEST_CASE("an input whose name is not UTF-8 is refused at once, naming it") {
  TempDir tmp("names");
  write_file(tmp / "caf\xE9.txt", "some text\n");
  std::string out;
  CHECK(shardify("--input " + q(tmp / "caf\xE9.txt") + tok() + " --out " + q(tmp / "ds"), &out) !=
        0);
  CHECK_MESSAGE(out.find("caf\\xE9.txt: the file's name is not UTF-8") != std::string::npos, out);
  CHECK(!fs::exists(tmp / "ds"));
}

TEST_CASE("a --labels name that is not UTF-8 is refused naming --labels and the label") {
  TempDir tmp("label-names");
  write_file(tmp / "g.tsv", "text\tlabel\ngood day\tgood\n");
  std::string out;
  CHECK(shardify("--input " + q(tmp / "g.tsv") + " --task cls --max-len 16" + tok() +
                     " --labels 'good,bad\xFF' --out " + q(tmp / "ds"),
                 &out) != 0);
  CHECK_MESSAGE(out.find("--labels: the label 'bad\\xFF' is not UTF-8") != std::string::npos, out);
  CHECK_MESSAGE(out.find("json.exception") == std::string::npos, out);
  CHECK(!fs::exists(tmp / "ds"));
}

TEST_CASE("labels: a whole number written as a float is that integer; no label at all says why") {
  TempDir tmp("labels");
  write_file(tmp / "floats.jsonl",
             "{\"text\":\"a\",\"label\":1.0}\n{\"text\":\"b\",\"label\":2}\n"
             "{\"text\":\"c\",\"label\":2.0}\n");
  shardify_ok("--input " + q(tmp / "floats.jsonl") + " --task cls --max-len 8" + tok() + " --out " +
              q(tmp / "floats"));
  CHECK(shardkit::Manifest::load(tmp / "floats").info.labels.names ==
        std::vector<std::string>{"1", "2"});

  // An empty label (a CSV cell left blank) is a missing label, not a class named "".
  write_file(tmp / "blank.csv", "text,label\na,pos\nb,\nc,neg\n");
  std::string blank;
  CHECK(shardify("--input " + q(tmp / "blank.csv") + " --task cls" + tok() + " --out " +
                     q(tmp / "blank"),
                 &blank) != 0);
  CHECK_MESSAGE(blank.find("blank.csv:3: the label is empty") != std::string::npos, blank);
  shardify_ok("--input " + q(tmp / "blank.csv") + " --task cls --on-error skip" + tok() +
              " --out " + q(tmp / "blank"));
  CHECK(shardkit::Manifest::load(tmp / "blank").info.labels.names ==
        std::vector<std::string>{"neg", "pos"});

  // Every row fails: the message names the first failing row, and --labels.
  const std::vector<std::pair<std::string, std::string>> inputs = {
      {"short.csv", "text,label\nhello\n"},
      {"half.jsonl", "{\"text\":\"a\",\"label\":1.5}\n"},
      {"null.jsonl", "{\"text\":\"a\",\"label\":null}\n"}};
  const std::vector<std::string> reasons = {"short.csv:2: expected 2 fields, found 1",
                                            "half.jsonl:1: label field 'label' must be a string, "
                                            "an integer or a boolean, not 1.5",
                                            "null.jsonl:1: label field 'label' must be a string, "
                                            "an integer or a boolean, not null"};
  for (size_t i = 0; i < inputs.size(); ++i) {
    write_file(tmp / inputs[i].first, inputs[i].second);
    for (const std::string policy : {"fail", "skip"}) {
      std::string out;
      CHECK(shardify("--input " + q(tmp / inputs[i].first) + " --task cls --on-error " + policy +
                         tok() + " --out " + q(tmp / "none"),
                     &out) != 0);
      CHECK_MESSAGE(out.find(reasons[i]) != std::string::npos, out);
      CHECK_MESSAGE(out.find("--labels") != std::string::npos, out);
      CHECK(!fs::exists(tmp / "none"));
    }
  }
}

TEST_CASE("CSV: a bad record across lines is skipped whole; its lines give no rows or labels") {
  // Python's csv module reads two records: the quoted field over lines 2-4 (label "neg", and
  // holding the invalid byte 0xff), then ["good", "pos"]. Skipping the first leaves one row, and
  // "pos" as the only label.
  TempDir tmp("csv_bad_quoted");
  write_file(tmp / "a.csv", "text,label\n\"bad \xff start\nmiddle line,pos\nend\",neg\ngood,pos\n");
  std::string out;
  shardify_ok("--input " + q(tmp / "a.csv") + " --task cls --max-len 8 --on-error skip --json" +
                  tok() + " --out " + q(tmp / "out"),
              &out);
  simdjson::dom::parser p;
  auto root = p.parse(out).value();
  CHECK(root["documents"].get_uint64().value() == 1);
  CHECK(root["skipped"].get_uint64().value() == 1);
  CHECK(std::string(as_array(root["errors"]).at(0).get_string().value())
            .find("a.csv:2: invalid UTF-8") != std::string::npos);
  CHECK(shardkit::Manifest::load(tmp / "out").info.labels.names == std::vector<std::string>{"pos"});
  CHECK(read_records(tmp / "out").size() == 1);
}

namespace {

struct BadInput {
  const char* name;
  const char* file;
  std::string content;
  std::string flags;
  std::string expect;  // in the message, after "file:line"
  int line;
  uint64_t good;  // examples converted with --on-error skip
};

}  // namespace

TEST_CASE("bad input: fail names file:line and publishes nothing; skip counts and reports") {
  TempDir tmp("bad");
  const std::vector<BadInput> cases = {
      {"invalid UTF-8 in text", "t.txt", "fine line\nanother\nbad \xC3\x28 byte\nlast\n",
       "--task lm --doc-sep line", "invalid UTF-8 at byte 4", 3, 3},
      {"invalid UTF-8 in JSONL", "u.jsonl", "{\"text\":\"ok\"}\n{\"text\":\"bad \xFF\"}\n",
       "--task lm", "invalid UTF-8", 2, 1},
      {"malformed JSON", "m.jsonl",
       "{\"text\":\"ok\"}\n{\"text\": \"unterminated}\n{\"text\":\"ok too\"}\n", "--task lm",
       "malformed JSON", 2, 2},
      {"missing field", "f.jsonl", "{\"text\":\"ok\"}\n{\"body\":\"no text field\"}\n", "--task lm",
       "missing field 'text'", 2, 1},
      {"field of the wrong type", "w.jsonl", "{\"text\":\"ok\"}\n\n{\"text\":42}\n", "--task lm",
       "field 'text' is not a string", 3, 1},
      {"a label beyond 64-bit integers", "big.jsonl",
       "{\"text\":\"ok\",\"label\":\"pos\",\"id\":18446744073709551616}\n{\"text\":\"bad\","
       "\"label\":18446744073709551616}\n{\"text\":\"fine\",\"label\":\"neg\",\"x\":-1e400}\n",
       "--task cls",
       "label field 'label' must be a string, an integer or a boolean, not "
       "18446744073709551616 (a number beyond 64-bit integers and doubles)",
       2, 2},
      {"empty document", "e.jsonl", "{\"text\":\"ok\"}\n{\"text\":\"   \"}\n", "--task lm",
       "empty document", 2, 1},
      {"CSV quote never closed", "q.csv", "text,label\n\"fine\",a\n\"open quote,b\nmore\n",
       "--task cls", "quoted field never closed", 3, 1},
      {"CSV junk after a closing quote", "j.csv", "text,label\n\"fine\",a\n\"x\"y,b\nok,b\n",
       "--task cls", "after a closing quote", 3, 2},
      {"CSV wrong field count", "c.csv", "text,label\nfine,a\ntoo,many,fields\n", "--task cls",
       "expected 2 fields, found 3", 3, 1},
      {"unknown label with --labels", "l.tsv", "text\tlabel\ngood\tpos\nodd\tmaybe\n",
       "--task cls --labels pos,neg", "unknown label 'maybe'", 3, 1},
      {"SQuAD answer not in the context", "s.json",
       R"({"data":[{"paragraphs":[{"context":"Paris is in France.","qas":[{"id":"1","question":"Where?","answers":[{"text":"France","answer_start":12}]},{"id":"2","question":"Which city?","answers":[{"text":"Berlin","answer_start":0}]}]}]}]})",
       "--task qa --max-len 32 --doc-stride 4 --max-query-len 8",
       "answer text does not match the context", 0, 1},
      {"JSONL qa with answer lists of different lengths", "qa.jsonl",
       "{\"context\":\"Paris is in "
       "France.\",\"question\":\"Where?\",\"answers\":{\"text\":[\"France\"],"
       "\"answer_start\":[12]}}\n{\"context\":\"Paris.\",\"question\":\"What?\",\"answers\":{"
       "\"text\":[\"Paris\"],"
       "\"answer_start\":[]}}\n",
       "--task qa --max-len 32 --doc-stride 4 --max-query-len 8",
       "equally long 'text' and 'answer_start'", 2, 1},
      {"SQuAD question missing", "n.json",
       R"({"data":[{"paragraphs":[{"context":"Paris is in France.","qas":[{"id":"1","answers":[]}]}]}]})",
       "--task qa --max-len 32 --doc-stride 4 --max-query-len 8", "missing field 'question'", 0, 0},
  };
  for (const BadInput& c : cases) {
    SUBCASE(c.name) {
      const fs::path in = tmp / c.file;
      write_file(in, c.content);
      std::string out;
      const std::string base = "--input " + q(in) + " " + c.flags + tok() + " --threads 2";
      CHECK(shardify(base + " --out " + q(tmp / "fail"), &out) != 0);
      const std::string where = in.string() + (c.line ? ":" + std::to_string(c.line) : "");
      CHECK_MESSAGE(out.find(where) != std::string::npos, out);
      CHECK_MESSAGE(out.find(c.expect) != std::string::npos, out);
      CHECK(!fs::exists(tmp / "fail"));

      if (c.good == 0) {
        // Nothing left to write is an error naming the input, unless asked for.
        CHECK(shardify(base + " --on-error skip --out " + q(tmp / "skip"), &out) != 0);
        CHECK_MESSAGE(out.find("no records to write") != std::string::npos, out);
        CHECK_MESSAGE(out.find(c.expect) != std::string::npos, out);
        CHECK(!fs::exists(tmp / "skip"));
      }
      shardify_ok(base + " --on-error skip --allow-empty --json --out " + q(tmp / "skip"), &out);
      simdjson::dom::parser p;
      auto root = p.parse(out).value();
      CHECK(root["documents"].get_uint64().value() == c.good);
      CHECK(root["skipped"].get_uint64().value() >= 1);
      std::string first(as_array(root["errors"]).at(0).get_string().value());
      CHECK(first.find(where) != std::string::npos);
      CHECK(first.find(c.expect) != std::string::npos);
      REQUIRE(run_command(inspect_bin() + " verify " + q(tmp / "skip")) == 0);
    }
  }
}

TEST_CASE(
    "JSONL: numbers beyond 64-bit integers and doubles in fields not read convert as "
    "without them") {
  // Python's json reads 1e400 as inf and 18446744073709551616 exactly: an id or a score so
  // large takes nothing from its row. Every odd row holds such numbers and only odd rows carry
  // the labels "neg" and "neutral": the label pass reads those rows too.
  TempDir tmp("wide_numbers");
  std::string with, without;
  for (int i = 0; i < 300; ++i) {
    const std::string label = i % 2 == 0 ? "pos" : i % 4 == 1 ? "neg" : "neutral";
    const std::string fields = "\"text\":" + json_string("row " + std::to_string(i) + " reads") +
                               ",\"label\":\"" + label + "\"";
    without += "{" + fields + "}\n";
    if (i % 2 == 0)
      with += "{" + fields + "}\n";
    else
      with += "{\"id\":1844674407370955161" + std::to_string(6 + i % 4) + "," + fields +
              ",\"score\":[1e400,-9223372036854775809]}\n";
  }
  write_file(tmp / "with.jsonl", with);
  write_file(tmp / "without.jsonl", without);
  for (const std::string task : {"cls", "lm"}) {
    CAPTURE(task);
    std::vector<std::vector<Rec>> records;
    for (const std::string name : {"with", "without"}) {
      const fs::path out = tmp / (task + "-" + name);
      std::string summary;
      shardify_ok("--input " + q(tmp / (name + ".jsonl")) + " --task " + task +
                      " --max-len 16 --threads 2 --json" + tok() + " --out " + q(out),
                  &summary);
      simdjson::dom::parser p;
      CHECK(p.parse(summary).value()["skipped"].get_uint64().value() == 0);
      records.push_back(read_records(out));
      if (task == "cls")
        CHECK(shardkit::Manifest::load(out).info.labels.names ==
              std::vector<std::string>{"neg", "neutral", "pos"});
    }
    REQUIRE(records[0].size() == records[1].size());
    REQUIRE(!records[0].empty());
    if (task == "cls") CHECK(records[0].size() == 300);
    for (size_t i = 0; i < records[0].size(); ++i) {
      CHECK(records[0][i].input_ids == records[1][i].input_ids);
      CHECK(records[0][i].labels == records[1][i].labels);
    }
  }
}

TEST_CASE("a file that cannot be read at all stops the conversion under either --on-error") {
  // A header without the selected column, or naming it twice, leaves no row of its file
  // readable, and a SQuAD file that is not JSON no question: that is not one bad row to skip.
  TempDir tmp("unusable");
  struct Unusable {
    const char* file;
    std::string content, flags, expect;
  };
  const std::string kQa = "--task qa --max-len 32 --doc-stride 4 --max-query-len 8";
  std::string rows;
  for (int i = 1; i <= 1000; ++i) rows += "row " + std::to_string(i) + ",pos\n";
  const std::vector<Unusable> cases = {
      {"b.csv", "txt,label\n" + rows, "--task lm --max-len 16",
       "b.csv:1: header: no column named 'text'"},
      {"b.csv", "text,lbl\n" + rows, "--task cls --max-len 16",
       "b.csv:1: header: no column named 'label'"},
      {"b.csv", "text,text,label\n" + rows, "--task lm --max-len 16",
       "b.csv:1: header: column 'text' appears twice"},
      {"b.tsv", "body\tlabel\nfine\tpos\n", "--task lm --max-len 16",
       "b.tsv:1: header: no column named 'text'"},
      {"b.json", R"({"data": [{"paragraphs": [)", kQa, "b.json: malformed JSON"},
      {"b.json", R"({"version": "1.1"})", kQa,
       "b.json: not SQuAD JSON: no 'data' array at the top level"},
      // Python's json reads NaN, and 1e400 as inf, but no other spelling of them.
      {"b.json", R"({"score": 1e400, "nan": nan, "data": []})", kQa,
       "b.json: malformed JSON: Problem while parsing an atom starting with the letter 'n'"}};
  for (const Unusable& c : cases) {
    INFO(c.expect);
    fs::remove_all(tmp / "in");
    fs::create_directories(tmp / "in");
    // A good file before it, whose rows alone would make a dataset.
    const bool squad = std::string(c.file).ends_with(".json");
    write_file(
        tmp / "in" / (squad ? "a.json" : std::string("a") + fs::path(c.file).extension().string()),
        squad
            ? R"({"data": [{"paragraphs": [{"context": "Paris is in France.", "qas": [{"id": "1", "question": "Where?", "answers": [{"text": "France", "answer_start": 12}]}]}]}]})"
            : std::string(fs::path(c.file).extension() == ".tsv" ? "text\tlabel\na\tpos\n"
                                                                 : "text,label\na,pos\n"));
    write_file(tmp / "in" / c.file, c.content);
    for (const std::string policy : {"fail", "skip"}) {
      std::string out;
      CHECK(shardify("--input " + q(tmp / "in") + " " + c.flags + " --on-error " + policy + tok() +
                         " --out " + q(tmp / "out"),
                     &out) != 0);
      CHECK_MESSAGE(out.find(c.expect) != std::string::npos, out);
      CHECK_MESSAGE(out.find("no records to write") == std::string::npos, out);
      CHECK(!fs::exists(tmp / "out"));
    }
  }
  // An empty SQuAD file holds no question, as an empty file of any other format: not an error.
  fs::remove_all(tmp / "in");
  fs::create_directories(tmp / "in");
  write_file(tmp / "in" / "empty.json", "");
  std::string out;
  shardify_ok("--input " + q(tmp / "in") + " " + kQa + " --on-error skip --allow-empty --json" +
                  tok() + " --out " + q(tmp / "out"),
              &out);
  simdjson::dom::parser p;
  CHECK(p.parse(out).value()["skipped"].get_uint64().value() == 0);
}

TEST_CASE("hints from the first row read it as the reader does: NaN and 1e400 do not hide it") {
  // Python's json.dumps writes NaN for a float NaN; both rows convert, so the hints must see them.
  TempDir tmp("first-row-numbers");
  const std::string rows =
      "{\"text\": \"a b\", \"score\": NaN, \"label\": \"pos\"}\n"
      "{\"text\": \"c\", \"score\": 1e400, \"label\": \"neg\"}\n";
  write_file(tmp / "rows.jsonl", rows);
  std::string out;
  CHECK(shardify("--input " + q(tmp / "rows.jsonl") + " --task cls --label-field lbl" + tok() +
                     " --max-len 16 --out " + q(tmp / "out"),
                 &out) != 0);
  CHECK_MESSAGE(out.find("the first row of " + (tmp / "rows.jsonl").string() +
                         " has text, score, label") != std::string::npos,
                out);
  // Named .json, the same rows are recognised as JSON Lines.
  write_file(tmp / "rows.json", rows);
  CHECK(shardify("--input " + q(tmp / "rows.json") + " --task lm --max-len 16" + tok() + " --out " +
                     q(tmp / "out"),
                 &out) != 0);
  CHECK_MESSAGE(out.find("pass --format jsonl") != std::string::npos, out);
}

TEST_CASE("a CSV with CR line endings is named as such, not blamed on --text-field") {
  // Python's csv module splits "text,label\rhello,pos\rbye,neg\r" at each \r; shardify ends
  // lines at \n only, so the file is one header line: it says so under either --on-error.
  TempDir tmp("cr_csv");
  write_file(tmp / "cr.csv", "text,label\rhello,pos\rbye,neg\r");
  for (const std::string policy : {"fail", "skip"}) {
    std::string out;
    CHECK(shardify("--input " + q(tmp / "cr.csv") + " --task lm --max-len 16 --on-error " + policy +
                       tok() + " --out " + q(tmp / "out"),
                   &out) != 0);
    CHECK_MESSAGE(
        out.find("cr.csv:1: header: the line holds carriage returns") != std::string::npos, out);
    CHECK_MESSAGE(out.find("CR line endings") != std::string::npos, out);
    CHECK(!fs::exists(tmp / "out"));
  }
}

TEST_CASE("JSON Lines named .json: the message says to pass --format jsonl") {
  // datasets' Dataset.to_json("x.json") writes one object per line.
  TempDir tmp("json_lines");
  write_file(tmp / "lines.json", "{\"text\": \"a\"}\n{\"text\": \"b\"}\n");
  for (const std::string task :
       {"--task lm --max-len 16", "--task qa --max-len 32 --doc-stride 4 --max-query-len 8"}) {
    std::string out;
    CHECK(shardify(
              "--input " + q(tmp / "lines.json") + " " + task + tok() + " --out " + q(tmp / "out"),
              &out) != 0);
    CHECK_MESSAGE(out.find("lines.json") != std::string::npos, out);
    CHECK_MESSAGE(out.find("JSON Lines") != std::string::npos, out);
    CHECK_MESSAGE(out.find("pass --format jsonl") != std::string::npos, out);
  }
  shardify_ok("--input " + q(tmp / "lines.json") + " --format jsonl --task lm --max-len 16" +
              tok() + " --out " + q(tmp / "out"));
  // One SQuAD object on one line is not JSON Lines: the usual message.
  write_file(tmp / "one.json", "{\"version\": \"1.1\", \"data\": []}\n");
  std::string out;
  CHECK(shardify("--input " + q(tmp / "one.json") + " --task lm --max-len 16" + tok() + " --out " +
                     q(tmp / "out2"),
                 &out) != 0);
  CHECK_MESSAGE(out.find("SQuAD JSON input is for --task qa") != std::string::npos, out);
  CHECK_MESSAGE(out.find("--format jsonl") == std::string::npos, out);
}

TEST_CASE("corrupt compressed input is an input error naming the file") {
  TempDir tmp("gz");
  write_file(tmp / "x.txt.gz", std::string("\x1f\x8b\x08\x00garbage-not-deflate-data", 28));
  std::string out;
  CHECK(shardify("--input " + q(tmp / "x.txt.gz") + tok() + " --out " + q(tmp / "ds"), &out) != 0);
  CHECK(out.find("x.txt.gz") != std::string::npos);
  CHECK(!fs::exists(tmp / "ds"));
}

TEST_CASE("--text-field with text input is refused, not ignored") {
  TempDir tmp("text-field");
  write_file(tmp / "a.txt", "{\"body\": \"a line of JSON in a text file\"}\n");
  std::string out;
  CHECK(shardify("--input " + q(tmp / "a.txt") + " --text-field body" + tok() + " --out " +
                     q(tmp / "ds"),
                 &out) != 0);
  CHECK(out.find("--text-field 'body' names a field, but the input is text") != std::string::npos);
  CHECK(!fs::exists(tmp / "ds"));
  // The default, named or not, and JSONL with the field, convert.
  CHECK(shardify("--input " + q(tmp / "a.txt") + " --text-field text" + tok() + " --out " +
                     q(tmp / "ds"),
                 &out) == 0);
  write_file(tmp / "a.jsonl", read_file(tmp / "a.txt"));
  CHECK(shardify("--input " + q(tmp / "a.jsonl") + " --text-field body" + tok() + " --out " +
                     q(tmp / "ds2"),
                 &out) == 0);
}

TEST_CASE("shard-inspect stats reports lengths, truncation and labels") {
  TempDir tmp("stats");
  shardify_ok("--input " + q(shardify_data("reviews.csv")) + " --task cls --max-len 16" + tok() +
              " --out " + q(tmp / "ds"));
  std::string out;
  REQUIRE(run_command(inspect_bin() + " stats --json " + q(tmp / "ds"), &out) == 0);
  simdjson::dom::parser p;
  auto root = p.parse(out).value();
  CHECK(root["records"].get_uint64().value() == 6);
  CHECK(root["examples"].get_uint64().value() == 6);
  CHECK(root["truncated"].get_uint64().value() == 1);  // only the long review exceeds 16 tokens
  // The truncated review, and "The manual says ..." whose 14 tokens + [CLS] + [SEP] fit exactly.
  CHECK(root["records_at_max_len"].get_uint64().value() == 2);
  uint64_t sum = 0;
  for (auto l : as_array(root["labels"])) {
    CHECK(l["records"].get_uint64().value() == 2);  // two reviews of each label
    sum += l["records"].get_uint64().value();
  }
  CHECK(sum == 6);
  REQUIRE(run_command(inspect_bin() + " stats " + q(tmp / "ds"), &out) == 0);
  CHECK(out.find("neutral") != std::string::npos);
}

TEST_CASE("stats: each histogram bin holds the lengths it names; declared labels without records") {
  // k words of one token each make a record of k + 2 tokens ([CLS], [SEP]), k times over: every
  // length 3..20 has its own count, and max-len 20 is no multiple of the bins asked for.
  TempDir tmp("stats-bins");
  std::string csv = "text,label\n";
  std::map<uint64_t, uint64_t> records_of_length;
  const char* labels[] = {"a", "b", "c"};
  for (int k = 1; k <= 18; ++k)
    for (int copy = 0; copy < k; ++copy) {
      std::string text = "the";
      for (int w = 1; w < k; ++w) text += " the";
      csv += text + "," + labels[(k + copy) % 3] + "\n";
      ++records_of_length[k + 2];
    }
  write_file(tmp / "lengths.csv", csv);
  shardify_ok("--input " + q(tmp / "lengths.csv") + " --task cls --max-len 20 --labels a,b,c,zzz" +
              tok() + " --out " + q(tmp / "ds"));
  for (const std::string bins : {"", " --bins 7", " --bins 20", " --bins 3"}) {
    CAPTURE(bins);
    std::string out;
    REQUIRE(run_command(inspect_bin() + " stats --json" + bins + " " + q(tmp / "ds"), &out) == 0);
    simdjson::dom::parser p;
    auto root = p.parse(out).value();
    uint64_t total = 0, expected_to = 0;
    for (auto bin : as_array(root["length_histogram"])) {
      const uint64_t from = bin["from"].get_uint64().value(), to = bin["to"].get_uint64().value();
      CHECK(from == expected_to + 1);  // the bins tile 1..20
      expected_to = to;
      uint64_t want = 0;
      for (auto [length, n] : records_of_length)
        if (length >= from && length <= to) want += n;
      CHECK_MESSAGE(bin["records"].get_uint64().value() == want, from << "-" << to);
      total += bin["records"].get_uint64().value();
    }
    CHECK(expected_to == 20);
    CHECK(total == 171);
    std::map<std::string, uint64_t> per_label;
    for (auto l : as_array(root["labels"]))
      per_label[std::string(l["name"].get_string().value())] = l["records"].get_uint64().value();
    CHECK(per_label ==
          std::map<std::string, uint64_t>{{"a", 57}, {"b", 57}, {"c", 57}, {"zzz", 0}});
  }
  std::string out;
  CHECK(run_command(inspect_bin() + " stats --bins 0 " + q(tmp / "ds"), &out) != 0);
  CHECK_MESSAGE(out.find("must be a whole number, 1 or more, not 0") != std::string::npos, out);
}

TEST_CASE("a killed conversion leaves no dataset or a complete one, and the next run succeeds") {
  TempDir tmp("kill");
  write_file(tmp / "big.txt", many_docs(200000, 3));
  std::string out;
  // SIGKILL after a moment: no destructor runs, so only the staging design protects the output.
  // --foreground: timeout signals only shardify and reaps it, so its pid is really gone.
  int rc = run_command("timeout --foreground -s KILL 0.3 " + shardify_bin() + " --input " +
                           q(tmp / "big.txt") + " --doc-sep line --max-len 64 --threads 1" + tok() +
                           " --out " + q(tmp / "ds"),
                       &out);
  if (rc == 0) MESSAGE("the conversion finished before the kill");
  // Killed before the publishing rename: no dataset; after it: a complete one.
  if (fs::exists(tmp / "ds")) REQUIRE(run_command(inspect_bin() + " verify " + q(tmp / "ds")) == 0);
  // Nothing else visible looks like a dataset (staging directories are hidden, named
  // .NAME.partial-*).
  for (const auto& e : fs::directory_iterator(tmp.path())) {
    const std::string name = e.path().filename().string();
    if (name == "ds" || name[0] == '.') continue;
    CHECK_MESSAGE(!fs::exists(e.path() / "manifest.json"), name);
  }
  const std::string force = fs::exists(tmp / "ds") ? " --force" : "";
  shardify_ok("--input " + q(tmp / "big.txt") + " --doc-sep line --max-len 64" + force + tok() +
              " --out " + q(tmp / "ds"));
  REQUIRE(run_command(inspect_bin() + " verify " + q(tmp / "ds")) == 0);
  // The stale staging directory of the killed run is gone.
  for (const auto& e : fs::directory_iterator(tmp.path()))
    CHECK_MESSAGE(e.path().filename().string().find(".partial") == std::string::npos,
                  e.path().string());
}

TEST_CASE("one large document: threads tokenize its parts, the ids are HF's for the whole") {
  // A document over kPartsAbove (512 KiB) is cut where Tokenizer::next_cut says and its parts
  // tokenized by any thread; as a .txt file (one document) and as one JSONL field. The shards are
  // byte-identical at 1, 2 and 3 threads, and the records hold HF's ids of the whole text:
  // Llama-3's, and Llama-2's, whose Prepend puts "▁" before the first part only.
  TempDir tmp("onedoc");
  std::vector<std::string> lines;
  for (const auto& e :
       std::filesystem::directory_iterator(fs::path(SHARDKIT_SOURCE_DIR) / "tests/data/tokenizer"))
    if (e.path().extension() == ".txt")
      for (const std::string& l : nonblank_lines(read_file(e.path()))) lines.push_back(l);
  std::sort(lines.begin(), lines.end());
  std::string doc;
  for (size_t i = 0; doc.size() < (1300u << 10); ++i)
    // Mostly blank lines between paragraphs, where a cut would change Llama-3's ids.
    doc += lines[(i * 7919) % lines.size()] + (i % 9 == 0 ? "\n" : "\n\n");
  while (doc.back() == '\n') doc.pop_back();
  write_file(tmp / "doc.txt", doc + "\n");
  write_file(tmp / "doc.jsonl", "{\"text\":" + json_string(doc) + "}\n");
  for (const std::string family : {"llama3", "llama2"}) {
    CAPTURE(family);
    const auto file = npm_file("@lenml/tokenizer-" + family + "/models/tokenizer.json");
    const auto tokenizer = shardkit::tok::Tokenizer::from_file(file);
    REQUIRE(tokenizer->next_cut(doc, 256u << 10) < doc.size() - (256u << 10));
    const std::string common = " --max-len 512 --block-size 8192 --tokenizer " + q(file);
    auto out = [&](const std::string& input, unsigned threads) {
      return tmp / (family + input + std::to_string(threads));
    };
    for (unsigned t : {1u, 2u, 3u}) {
      for (const std::string input : {"txt", "jsonl"})
        shardify_ok("--input " + q(tmp / ("doc." + input)) + common + " --threads " +
                    std::to_string(t) + " --out " + q(out(input, t)));
    }
    require_identical_dirs(out("txt", 1), out("txt", 2));
    require_identical_dirs(out("txt", 1), out("txt", 3));
    require_identical_dirs(out("jsonl", 1), out("jsonl", 2));
    require_identical_dirs(out("jsonl", 1), out("jsonl", 3));
    const auto records = read_records(out("txt", 2));
    CHECK(same_records(records, read_records(out("jsonl", 2))));
    std::vector<uint32_t> want = hf_ids(file, {doc}, "plain").at(0);
    want.push_back(*tokenizer->special_tokens().eos);  // shardify's separator
    std::vector<uint32_t> got;
    for (const Rec& r : records) {
      const auto ids = real_ids(r);
      got.insert(got.end(), ids.begin(), ids.end());
    }
    CHECK(got.size() == want.size());
    CHECK(got == want);
  }
}

TEST_CASE("an output inside an input directory is refused before converting, naming both") {
  TempDir tmp("out-in-input");
  const fs::path data = tmp / "data";
  fs::create_directories(data);
  write_file(data / "a.txt", read_file(shardify_data("docs.txt")));
  const std::string in = "--input " + q(data) + " --doc-sep line" + tok() + " --max-len 16";
  // Before: the first run wrote data/ds, and the next read its shards back as text.
  std::string out;
  CHECK(shardify(in + " --out " + q(data / "ds"), &out) != 0);
  CHECK_MESSAGE(out.find((data / "ds").string()) != std::string::npos, out);
  CHECK_MESSAGE(out.find("inside the input directory " + data.string()) != std::string::npos, out);
  CHECK_FALSE(fs::exists(data / "ds"));
  // The same path another way (a/.., a link to the directory) is the same directory.
  fs::create_directory_symlink(data, tmp / "link");
  CHECK(shardify(in + " --out " + q(tmp / "link" / "sub" / ".." / "ds"), &out) != 0);
  CHECK(out.find("inside the input directory") != std::string::npos);
  CHECK_FALSE(fs::exists(data / "ds"));
  // Under a hidden entry, which the walk skips, the output is never read back.
  shardify_ok(in + " --out " + q(data / ".cache" / "ds"));
  shardify_ok(in + " --force --out " + q(data / ".cache" / "ds"));
  CHECK(shardkit::Manifest::load(data / ".cache" / "ds").info.source.files.size() == 1);
  // A glob that reaches into the output: its files would be replaced as they are read.
  shardify_ok(in + " --out " + q(tmp / "ds"));
  CHECK(shardify("--input " + q(tmp / "*" / "manifest.json") + tok() +
                     " --max-len 16 --force --out " + q(tmp / "ds"),
                 &out) != 0);
  CHECK_MESSAGE(out.find("the output holds the input file " +
                         (tmp / "ds" / "manifest.json").string()) != std::string::npos,
                out);
  CHECK(fs::exists(tmp / "ds" / "manifest.json"));
}

TEST_CASE("an input listed twice is converted twice, and the summary says so") {
  TempDir tmp("repeated-input");
  fs::create_directories(tmp / "data");
  write_file(tmp / "data" / "a.txt", "one\ntwo\nthree\n");
  write_file(tmp / "data" / "b.txt", "four\n");
  fs::create_symlink(tmp / "data" / "a.txt", tmp / "link.txt");
  const std::string common = " --doc-sep line" + tok() + " --max-len 16 --json --out ";
  std::string out;
  // The directory holds a.txt, listed again by name and through a link: 3 + 3 + 3 + 1 rows.
  shardify_ok("--input " + q(tmp / "data") + " --input " + q(tmp / "data" / "a.txt") + " --input " +
                  q(tmp / "link.txt") + common + q(tmp / "ds"),
              &out);
  const auto summary = nlohmann::json::parse(out.substr(out.rfind("\n{") + 1));
  CHECK(summary["examples"] == 10);
  REQUIRE(summary["notes"].size() == 1);
  CHECK(summary["notes"][0] == (tmp / "data" / "a.txt").string() +
                                   " is an input 3 times (also as " + (tmp / "link.txt").string() +
                                   "): its rows are converted 3 times");
  // The text summary shows it too; a run without repeats has no note.
  shardify_ok("--input " + q(tmp / "data") + " --input " + q(tmp / "data" / "b.txt") +
                  " --doc-sep line" + tok() + " --max-len 16 --out " + q(tmp / "ds2"),
              &out);
  CHECK_MESSAGE(
      out.find("  note: " + (tmp / "data" / "b.txt").string() +
               " is an input 2 times: its rows are converted 2 times") != std::string::npos,
      out);
  shardify_ok("--input " + q(tmp / "data") + common + q(tmp / "ds3"), &out);
  CHECK(nlohmann::json::parse(out.substr(out.rfind("\n{") + 1))["notes"].empty());
}

TEST_CASE("--block-size is refused past the format's largest block (1 GiB), the limit named") {
  TempDir tmp("block-size");
  const std::string in = "--input " + q(shardify_data("docs.txt")) + tok() + " --max-len 16";
  std::string out;
  CHECK(shardify(in + " --block-size 1073741825 --out " + q(tmp / "a"), &out) != 0);
  CHECK_MESSAGE(out.find("--block-size must be from 1 to 1073741824") != std::string::npos, out);
  CHECK(shardify(in + " --block-size 4294967295 --out " + q(tmp / "b"), &out) != 0);
  CHECK_MESSAGE(out.find("from 1 to 1073741824") != std::string::npos, out);
  CHECK_FALSE(fs::exists(tmp / "a"));
}

TEST_CASE("an s3:// output with a TMPDIR that names no directory names TMPDIR and its value") {
  TempDir tmp("tmpdir");
  const std::string missing = (tmp / "no-such-dir").string();
  const std::string in = "--input " + q(shardify_data("docs.txt")) + tok() + " --max-len 16";
  std::string out;
  CHECK(run_command(
            "TMPDIR=" + q(missing) + " " + shardify_bin() + " " + in + " --out s3://bucket/prefix",
            &out) != 0);
  CHECK_MESSAGE(out.find("TMPDIR names no directory") != std::string::npos, out);
  CHECK_MESSAGE(out.find(missing) != std::string::npos, out);
  // A local output does not need it.
  CHECK_MESSAGE(run_command("TMPDIR=" + q(missing) + " " + shardify_bin() + " " + in + " --out " +
                                q(tmp / "ds"),
                            &out) == 0,
                out);
}

TEST_CASE("sft: every conversation dropped for --max-len says so, not to check --text-field") {
  TempDir tmp("sft-all-dropped");
  std::string rows;
  for (int i = 0; i < 3; ++i)
    rows +=
        "{\"prompt\": \"tell me about the weather in the mountains today\", \"response\": "
        "\"it is cold and windy with some snow expected later in the evening\"}\n";
  write_file(tmp / "long.jsonl", rows);
  std::string out;
  CHECK(shardify("--task sft --input " + q(tmp / "long.jsonl") + " --tokenizer " + q(gpt2_json()) +
                     " --max-len 8 --out " + q(tmp / "ds"),
                 &out) != 0);
  INFO(out);
  CHECK(out.find("3 examples, 0 skipped, 3 dropped as longer than --max-len 8") !=
        std::string::npos);
  CHECK(out.find("--text-field") == std::string::npos);
  CHECK_FALSE(fs::exists(tmp / "ds"));
}

TEST_CASE("an input subdirectory that cannot be read is an error naming it") {
  TempDir tmp("unreadable-subdir");
  const fs::path d = tmp / "d";
  fs::create_directories(d / "locked");
  write_file(d / "a.txt", "a line\n");
  write_file(d / "locked" / "b.txt", "another line\n");
  fs::permissions(d / "locked", fs::perms::none);
  fs::create_directories(tmp / "out");
  fs::permissions(tmp / "out", fs::perms::all);
  // Permissions hold back everyone but root: root runs shardify as nobody.
  std::string as_user;
  if (::geteuid() == 0) {
    if (run_command("command -v setpriv >/dev/null") != 0) {
      fs::permissions(d / "locked", fs::perms::owner_all);
      MESSAGE("skipped: running as root without setpriv to drop privileges");
      return;
    }
    as_user = "setpriv --reuid=65534 --regid=65534 --clear-groups ";
  }
  std::string out;
  const int rc = run_command(as_user + shardify_bin() + " --input " + q(d) + tok() +
                                 " --on-error skip --out " + q(tmp / "out" / "ds"),
                             &out);
  fs::permissions(d / "locked", fs::perms::owner_all);  // for TempDir's removal
  CHECK(rc != 0);
  CHECK_MESSAGE(out.find((d / "locked").string() + ": cannot read the input directory: "
                                                   "Permission denied") != std::string::npos,
                out);
  CHECK_FALSE(fs::exists(tmp / "out" / "ds"));
}

TEST_CASE("an input whose name gives no format is refused naming it, not read as the first's") {
  // An editor's backup beside the data is a copy of its rows: read as JSONL because the first
  // file is, it doubled them without a word.
  TempDir tmp("stray-input");
  fs::create_directories(tmp / "in");
  write_file(tmp / "in" / "a.jsonl", "{\"text\": \"one\"}\n{\"text\": \"two\"}\n");
  write_file(tmp / "in" / "b.jsonl", "{\"text\": \"three\"}\n");
  write_file(tmp / "in" / "b.jsonl~", "{\"text\": \"three\"}\n");
  const std::string common = tok() + " --max-len 16 --no-pack --json --out ";
  std::string out;
  for (const fs::path& input : {tmp / "in", tmp / "in" / "b*"}) {
    CHECK(shardify("--input " + q(input) + common + q(tmp / "ds"), &out) != 0);
    CHECK_MESSAGE(
        out.find((tmp / "in" / "b.jsonl~").string() +
                 ": cannot infer the input format from the file name") != std::string::npos,
        out);
    CHECK_FALSE(fs::exists(tmp / "ds"));
  }
  // --format reads every file in it, the backup's rows included: 2 + 1 + 1.
  shardify_ok("--input " + q(tmp / "in") + " --format jsonl" + common + q(tmp / "all"), &out);
  CHECK(nlohmann::json::parse(out.substr(out.rfind("\n{") + 1))["examples"] == 4);
  fs::remove(tmp / "in" / "b.jsonl~");
  shardify_ok("--input " + q(tmp / "in") + common + q(tmp / "ds"), &out);
  CHECK(nlohmann::json::parse(out.substr(out.rfind("\n{") + 1))["examples"] == 3);
}

TEST_CASE("an input that cannot be looked at says why, not that it does not exist") {
  TempDir tmp("input-reason");
  fs::create_symlink(tmp / "loop-b.txt", tmp / "loop-a.txt");
  fs::create_symlink(tmp / "loop-a.txt", tmp / "loop-b.txt");
  std::string out;
  CHECK(shardify("--input " + q(tmp / "loop-a.txt") + tok() + " --out " + q(tmp / "ds"), &out) !=
        0);
  CHECK_MESSAGE(
      out.find((tmp / "loop-a.txt").string() +
               ": cannot read the input: Too many levels of symbolic links") != std::string::npos,
      out);
  CHECK(shardify("--input " + q(tmp / "none.txt") + tok() + " --out " + q(tmp / "ds"), &out) != 0);
  CHECK_MESSAGE(
      out.find((tmp / "none.txt").string() + ": input does not exist") != std::string::npos, out);
  CHECK_FALSE(fs::exists(tmp / "ds"));
}

TEST_CASE("JSON Lines with CR line endings: the error says so, not only 'improper structure'") {
  TempDir tmp("cr_jsonl");
  write_file(tmp / "cr.jsonl", "{\"text\": \"hello\"}\r{\"text\": \"bye\"}\r");
  std::string out;
  CHECK(shardify(
            "--input " + q(tmp / "cr.jsonl") + " --max-len 16" + tok() + " --out " + q(tmp / "out"),
            &out) != 0);
  CHECK_MESSAGE(out.find("cr.jsonl:1: malformed JSON") != std::string::npos, out);
  CHECK_MESSAGE(out.find("CR line endings") != std::string::npos, out);
  CHECK(!fs::exists(tmp / "out"));
  // A malformed line without a carriage return gets no such hint.
  write_file(tmp / "bad.jsonl", "{\"text\": \"hello\" \"x\": 1}\n");
  CHECK(shardify("--input " + q(tmp / "bad.jsonl") + " --max-len 16" + tok() + " --out " +
                     q(tmp / "out"),
                 &out) != 0);
  CHECK_MESSAGE(out.find("bad.jsonl:1: malformed JSON") != std::string::npos, out);
  CHECK_MESSAGE(out.find("carriage return") == std::string::npos, out);
}

TEST_CASE(
    "shardify tokenize drops a byte order mark before the first line, as the converter does") {
  TempDir tmp("tokenize-bom");
  write_file(tmp / "bom.txt", "\xEF\xBB\xBFhello world\nsecond line\n");
  write_file(tmp / "plain.txt", "hello world\nsecond line\n");
  // A mark inside the text, here at a later line's start, is text.
  write_file(tmp / "later.txt", "hello world\n\xEF\xBB\xBFsecond line\n");
  const std::string tool = shardify_bin() + " tokenize --tokenizer " + q(gpt2_json()) + " < ";
  std::string bom, plain, later;
  REQUIRE(run_command(tool + q(tmp / "bom.txt"), &bom) == 0);
  REQUIRE(run_command(tool + q(tmp / "plain.txt"), &plain) == 0);
  REQUIRE(run_command(tool + q(tmp / "later.txt"), &later) == 0);
  CHECK(bom == plain);
  CHECK(later != plain);
  CHECK(later.substr(0, later.find('\n')) == plain.substr(0, plain.find('\n')));
  // The ids the converter stores for the same file, line by line.
  std::string out;
  shardify_ok("--input " + q(tmp / "bom.txt") + " --doc-sep line --no-pack --max-len 16" +
                  " --tokenizer " + q(gpt2_json()) + " --out " + q(tmp / "ds"),
              &out);
  const auto records = read_records(tmp / "ds");
  REQUIRE(records.size() == 2);
  const std::vector<uint32_t> first = real_ids(records[0]);  // --no-pack appends no end-of-text
  std::string stored = "[";
  for (size_t i = 0; i < first.size(); ++i) stored += (i ? "," : "") + std::to_string(first[i]);
  CHECK(bom.substr(0, bom.find('\n')) == stored + "]");
}

TEST_CASE("shard-inspect counts past 2^64 - 1 are refused, not read as 2^64 - 1") {
  TempDir tmp("inspect-huge-count");
  shardify_ok("--input " + q(shardify_data("docs.txt")) + tok() + " --max-len 16 --out " +
              q(tmp / "ds"));
  const std::string ds = " " + q(tmp / "ds");
  std::string out, largest;
  for (const std::string& args : {"order" + ds + " --epoch 18446744073709551616 --count 4",
                                  "order" + ds + " --epoch 99999999999999999999 --count 4",
                                  "order" + ds + " --count 4 --start 18446744073709551616",
                                  "dump" + ds + " --from 1" + std::string(25, '0')}) {
    CAPTURE(args);
    CHECK(run_command(inspect_bin() + " " + args, &out) == 2);
    CHECK_MESSAGE(out.find("must be at most 18446744073709551615, not ") != std::string::npos, out);
  }
  // The largest value is a value.
  CHECK(run_command(inspect_bin() + " order" + ds + " --epoch 18446744073709551615 --count 4",
                    &largest) == 0);
  CHECK(std::count(largest.begin(), largest.end(), '\n') == 4);
}

TEST_CASE("xz, bzip2 and lz4 inputs are named as compressions that are not read") {
  // Read as text, they failed at their first byte: "malformed JSON" or "invalid UTF-8".
  TempDir tmp("foreign-compression");
  const std::string rows = "{\"text\": \"one\"}\n";
  write_file(tmp / "rows.jsonl", rows);
  REQUIRE(run_command("python3 -c 'import bz2, lzma, sys; d = open(sys.argv[1], \"rb\").read(); "
                      "open(sys.argv[2], \"wb\").write(lzma.compress(d)); "
                      "open(sys.argv[3], \"wb\").write(bz2.compress(d))' " +
                      q(tmp / "rows.jsonl") + " " + q(tmp / "rows.jsonl.xz") + " " +
                      q(tmp / "rows.jsonl.bz2")) == 0);
  // `printf '{"text": "one"}\n' | lz4 -c`: a frame of the same row.
  write_file(tmp / "rows.jsonl.lz4",
             std::string("\x04\x22\x4d\x18\x64\x40\xa7\x10\x00\x00\x80", 11) + rows +
                 std::string("\x00\x00\x00\x00\xfc\xc3\xd9\x56", 8));
  for (const auto& [file, name] : std::vector<std::pair<std::string, std::string>>{
           {"rows.jsonl.xz", "xz"}, {"rows.jsonl.bz2", "bzip2"}, {"rows.jsonl.lz4", "lz4"}}) {
    CAPTURE(file);
    const std::string said = (tmp / file).string() + ": the file is " + name +
                             "-compressed, which shardify does not read";
    for (const std::string format : {"", " --format jsonl"}) {
      std::string out;
      CHECK(shardify("--input " + q(tmp / file) + format + tok() + " --out " + q(tmp / "ds"),
                     &out) != 0);
      CHECK_MESSAGE(out.find(said) != std::string::npos, out);
      CHECK_FALSE(fs::exists(tmp / "ds"));
    }
  }
  // A text that starts as bzip2's magic number does is text.
  write_file(tmp / "bzh.txt", "BZh9 is how this text starts\n");
  shardify_ok("--input " + q(tmp / "bzh.txt") + tok() + " --out " + q(tmp / "text"));
}

TEST_CASE(
    "without --force, an output --force would not replace either says why, not 'pass --force'") {
  TempDir tmp("force-advice");
  const std::string in = "--input " + q(shardify_data("docs.txt")) + tok() + " --max-len 16";
  fs::create_directories(tmp / "photos");
  write_file(tmp / "photos" / "a.jpg", "not a dataset");
  write_file(tmp / "notes.txt", "keep me");
  shardify_ok(in + " --out " + q(tmp / "ds"));
  write_file(tmp / "ds" / "notes.txt", "mine");
  shardify_ok(in + " --part 0/1 --out " + q(tmp / "p0"));
  const std::vector<std::pair<fs::path, std::string>> refusals = {
      {tmp / "photos", "is not a shardkit dataset"},
      {tmp / "notes.txt", "exists and is not a directory"},
      {tmp / "ds", "holds notes.txt, which is not a file of its dataset"}};
  for (const auto& [target, why] : refusals) {
    CAPTURE(target);
    for (const std::string& args :
         {in + " --out " + q(target), "merge " + q(target) + " " + q(tmp / "p0")}) {
      std::string out;
      CHECK(shardify(args, &out) != 0);
      CHECK_MESSAGE(out.find(target.string() + ": " + why) != std::string::npos, out);
      CHECK_MESSAGE(out.find("pass --force") == std::string::npos, out);
    }
  }
  CHECK(read_file(tmp / "photos" / "a.jpg") == "not a dataset");
  CHECK(read_file(tmp / "notes.txt") == "keep me");
  CHECK(read_file(tmp / "ds" / "notes.txt") == "mine");
  // A dataset --force would replace still says to pass it.
  fs::remove(tmp / "ds" / "notes.txt");
  for (const std::string& args :
       {in + " --out " + q(tmp / "ds"), "merge " + q(tmp / "ds") + " " + q(tmp / "p0")}) {
    std::string out;
    CHECK(shardify(args, &out) != 0);
    CHECK_MESSAGE(out.find("already exists") != std::string::npos, out);
    CHECK_MESSAGE(out.find("pass --force") != std::string::npos, out);
  }
}

TEST_CASE("an unknown label names the labels given, and one given with blanks around it") {
  // "--labels 'neg, pos'" names " pos": a row labelled "pos" was only "unknown label 'pos'".
  TempDir tmp("label-blanks");
  write_file(
      tmp / "rows.jsonl",
      "{\"text\": \"good\", \"label\": \"neg\"}\n{\"text\": \"fine\", \"label\": \"pos\"}\n");
  const std::string in = "--input " + q(tmp / "rows.jsonl") + " --task cls" + tok();
  std::string out;
  CHECK(shardify(in + " --labels 'neg, pos' --out " + q(tmp / "ds"), &out) != 0);
  CHECK_MESSAGE(out.find("rows.jsonl:2: unknown label 'pos' (the labels given: neg, ' pos'); "
                         "' pos' has blanks around it") != std::string::npos,
                out);
  CHECK(shardify(in + " --labels neg,other --out " + q(tmp / "ds"), &out) != 0);
  CHECK_MESSAGE(out.find("rows.jsonl:2: unknown label 'pos' (the labels given: neg, other)\n") !=
                    std::string::npos,
                out);
  CHECK_FALSE(fs::exists(tmp / "ds"));
  shardify_ok(in + " --labels neg,pos --out " + q(tmp / "ds"));
}

TEST_CASE("shard-inspect report refuses --top -1 and --batch-size 0 or -1, as order does") {
  // CLI11 read -1 as 2^64 - 1 (every token listed; a batch of 2^64 - 1, "0 steps an epoch"),
  // and --batch-size 0 was drawn as batches of 1.
  TempDir tmp("report-counts");
  shardify_ok("--input " + q(shardify_data("docs.txt")) + tok() + " --max-len 16 --out " +
              q(tmp / "ds"));
  write_file(tmp / "mix.json", R"({"sources": [{"path": "ds", "weight": 1}]})");
  const std::string report = inspect_bin() + " report " + q(tmp / "ds") + " -o " +
                             q(tmp / "r.html") + " --mixture " + q(tmp / "mix.json");
  for (const auto& [flag, why] : std::vector<std::pair<std::string, std::string>>{
           {" --top -1", "--top: must be a whole number, 0 or more, not -1"},
           {" --batch-size 0", "--batch-size: must be a whole number, 1 or more, not 0"},
           {" --batch-size -1", "--batch-size: must be a whole number, 1 or more, not -1"}}) {
    CAPTURE(flag);
    std::string out;
    CHECK(run_command(report + flag, &out) == 2);
    CHECK_MESSAGE(out.find(why) != std::string::npos, out);
    CHECK_FALSE(fs::exists(tmp / "r.html"));
  }
  std::string out;
  CHECK_MESSAGE(run_command(report + " --top 0 --batch-size 1", &out) == 0, out);
}

// The human-readable summary is one item per line; a newline in a file's name started a line of
// its own ("  note: DIR/we", then "ird.jsonl is an input 2 times ..."). The --json summary
// escapes it as JSON does, and keeps the name as it is.
TEST_CASE("a file name holding a newline stays on its summary line, escaped as \\x0A") {
  TempDir tmp("newline-name");
  const fs::path odd = tmp / "we\nird.jsonl";
  write_file(odd, "{\"text\": \"a row\"}\nnot json\n");
  const std::string shown = tmp.path().string() + "/we\\x0Aird.jsonl";
  const std::string common =
      "--input " + q(odd) + " --input " + q(odd) + tok() + " --max-len 16 --on-error skip --out ";
  std::string out;
  shardify_ok(common + q(tmp / "o\nut"), &out);
  INFO(out);
  CHECK(out.find("shardify: wrote " + tmp.path().string() + "/o\\x0Aut\n") != std::string::npos);
  CHECK(out.find("\n  note: " + shown + " is an input 2 times: its rows are converted 2 times\n") !=
        std::string::npos);
  CHECK(out.find("\n    " + shown + ":2: malformed JSON") != std::string::npos);
  // Every line is the summary's: its first, or an indented item.
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);)
    CHECK_MESSAGE((line.rfind("shardify: wrote ", 0) == 0 || line.rfind("  ", 0) == 0), line);
  shardify_ok(common + q(tmp / "json") + " --json", &out);
  const auto summary = nlohmann::json::parse(out.substr(out.rfind("\n{") + 1));
  CHECK(summary["notes"][0] ==
        odd.string() + " is an input 2 times: its rows are converted 2 times");
}

// No row gave a record: the advice named --text-field whatever the input, though plain text has
// no fields, and qa and sft read others.
TEST_CASE("the advice when nothing was written names what the input and task read") {
  TempDir tmp("empty-advice");
  write_file(tmp / "blank.txt", "\n  \n\n");
  write_file(tmp / "rows.jsonl", "{\"body\": \"a row\"}\n");
  struct Case {
    std::string args, advice;
  };
  for (const Case& c : std::vector<Case>{
           {"--input " + q(tmp / "blank.txt") + tok(),
            "check the input (plain text has no fields to name; blank lines are never documents)"},
           {"--input " + q(tmp / "blank.txt") + " --doc-sep line" + tok(),
            "check the input (plain text has no fields to name; blank lines are never documents)"},
           {"--input " + q(tmp / "rows.jsonl") + tok(), "check the input and --text-field"},
           {"--task qa --input " + q(tmp / "rows.jsonl") + tok(),
            "check the input and --context-field"},
           {"--task sft --input " + q(tmp / "rows.jsonl") + " --tokenizer " + q(gpt2_json()),
            "check the input, --prompt-field and --response-field"}}) {
    std::string out;
    CHECK(shardify(c.args + " --on-error skip --out " + q(tmp / "ds"), &out) != 0);
    INFO(c.args, "\n", out);
    CHECK(out.find("no records to write") != std::string::npos);
    CHECK(out.find("; " + c.advice + ", or pass --allow-empty") != std::string::npos);
    if (c.advice.find("--text-field") == std::string::npos)
      CHECK(out.find("--text-field") == std::string::npos);
    CHECK_FALSE(fs::exists(tmp / "ds"));
  }
}
