// The C++ examples train from shards: on small datasets built here with a learnable signal, the
// classifier's loss falls and its held-out accuracy (read in sequential order) is high; the MLM
// example's loss falls.
#include <doctest/doctest.h>

#include <cstring>
#include <random>
#include <regex>

#include "core/dataset_writer.h"
#include "test_util.h"

using namespace shardkit;
using shardkit::testing::TempDir;

namespace {

constexpr uint32_t kLen = 32;

std::string example(const std::string& name) {
  return (std::filesystem::path(SHARDKIT_BINARY_DIR) / "examples" / name).string();
}

// A figure from the example's final "RESULT key value ..." line.
double field(const std::string& text, const std::string& key) {
  const auto at = text.find("RESULT ");
  if (at == std::string::npos) return -1;
  const std::string result = text.substr(at, text.find('\n', at) - at);
  std::smatch m;
  if (!std::regex_search(result, m, std::regex(" " + key + " ([-0-9.]+)"))) return -1;
  return std::stod(m[1]);
}

// Label c plants three tokens from its own range [300 + 20c, 320 + 20c) among random ones,
// with one of them in the second segment so token_type_ids matter only a little.
void write_classification(const std::filesystem::path& dir, uint64_t records, uint64_t seed,
                          std::vector<std::string> label_names = {"a", "b", "c"}) {
  Schema schema({{"input_ids", DType::kU16, {kLen}},
                 {"length", DType::kU16, {}},
                 {"length_a", DType::kU16, {}},
                 {"labels", DType::kI64, {}}});
  WriterOptions wo;
  wo.block_bytes = 8192;
  DatasetWriter w(dir, schema, wo);
  std::mt19937_64 rng(seed);
  std::vector<unsigned char> rec(schema.record_size());
  for (uint64_t i = 0; i < records; ++i) {
    uint16_t ids[kLen] = {};
    const uint16_t len = static_cast<uint16_t>(8 + rng() % (kLen - 8));
    const int64_t label = static_cast<int64_t>(rng() % 3);
    ids[0] = 1;
    for (uint16_t j = 1; j + 1 < len; ++j) ids[j] = static_cast<uint16_t>(5 + rng() % 295);
    ids[len - 1] = 2;
    for (int k = 0; k < 3; ++k)
      ids[1 + rng() % (len - 2)] = static_cast<uint16_t>(300 + 20 * label + rng() % 20);
    const uint16_t len_a = static_cast<uint16_t>(len / 2);
    std::memcpy(rec.data() + schema.at("input_ids").offset, ids, sizeof ids);
    std::memcpy(rec.data() + schema.at("length").offset, &len, 2);
    std::memcpy(rec.data() + schema.at("length_a").offset, &len_a, 2);
    std::memcpy(rec.data() + schema.at("labels").offset, &label, 8);
    w.append(rec.data());
  }
  DatasetInfo info = DatasetInfo::infer(schema);
  info.fields[2].role = FieldRole::kFirstSegmentLength;
  info.labels = {std::move(label_names), "given"};
  w.set_info(info);
  w.finish();
}

// [CLS], then ids in [10, 100) that follow one of two patterns fixed by position, [SEP],
// padding: a masked token is predictable from its position and neighbours.
void write_progressions(const std::filesystem::path& dir, uint64_t records) {
  Schema schema({{"input_ids", DType::kU16, {kLen}}, {"length", DType::kU16, {}}});
  WriterOptions wo;
  wo.block_bytes = 8192;
  DatasetWriter w(dir, schema, wo);
  std::mt19937_64 rng(17);
  std::vector<unsigned char> rec(schema.record_size());
  for (uint64_t i = 0; i < records; ++i) {
    uint16_t ids[kLen] = {};
    const uint16_t len = static_cast<uint16_t>(12 + rng() % (kLen - 12));
    const uint64_t pattern = rng() % 2;
    ids[0] = 1;
    for (uint16_t j = 1; j + 1 < len; ++j)
      ids[j] = static_cast<uint16_t>(10 + (j * 3 + pattern * 7) % 90);
    ids[len - 1] = 2;
    std::memcpy(rec.data() + schema.at("input_ids").offset, ids, sizeof ids);
    std::memcpy(rec.data() + schema.at("length").offset, &len, 2);
    w.append(rec.data());
  }
  w.finish();
}

}  // namespace

TEST_CASE("train_classifier learns a sentence-pair classification from shards") {
  TempDir tmp("ex");
  write_classification(tmp / "train", 3000, 1);
  write_classification(tmp / "valid", 600, 2);
  std::string out;
  const int rc = shardkit::testing::run_command(
      example("train_classifier") + " --train " + (tmp / "train").string() + " --valid " +
          (tmp / "valid").string() + " --epochs 3 --batch-size 32 --threads 2",
      &out);
  MESSAGE(out);
  REQUIRE(rc == 0);
  const double first = field(out, "first_train_loss"), last = field(out, "last_train_loss");
  const double before = field(out, "valid_accuracy_before"), after = field(out, "valid_accuracy");
  CHECK(first > 0);
  CHECK(last < 0.5 * first);
  CHECK(before < 0.6);  // about chance (1/3) before training
  CHECK(after > 0.9);
  CHECK(out.find("(600 examples)") != std::string::npos);  // every held-out example, once
  CHECK(out.find("labels 3,") != std::string::npos);       // read from the manifest
  // Progress inside each epoch (3000 / 32 = 93 full steps, a line every 50) and per-epoch
  // times, as plain lines: no carriage returns or escape codes in a log.
  for (const char* line : {"epoch 1 step 50/93 ", "epoch 3 step 50/93 ", "epoch 3/3 steps 93 "})
    CHECK_MESSAGE(out.find(line) != std::string::npos, line);
  CHECK(out.find("s: train ") != std::string::npos);
  CHECK(out.find('\r') == std::string::npos);
  CHECK(out.find('\x1b') == std::string::npos);
}

TEST_CASE("train_mlm's masked-LM loss falls") {
  TempDir tmp("ex");
  write_progressions(tmp / "lm", 3000);
  std::string out;
  const int rc = shardkit::testing::run_command(
      example("train_mlm") + " --data " + (tmp / "lm").string() +
          " --mask-id 3 --vocab-size 100 --special 0,1,2 --epochs 1 --max-steps 60 --batch-size 32 "
          "--dim 32 --layers 1 --heads 2 --lr 0.01 --log-every 10 --threads 2",
      &out);
  MESSAGE(out);
  REQUIRE(rc == 0);
  const double first = field(out, "first_mlm_loss"), last = field(out, "last_mlm_loss");
  CHECK(first > 0);
  CHECK(last < 0.6 * first);
}

TEST_CASE("the examples list their flags and refuse a misspelt or out-of-range one") {
  TempDir tmp("ex");
  write_progressions(tmp / "lm", 200);
  write_classification(tmp / "cls", 200, 1);
  for (const char* name : {"train_classifier", "train_mlm"}) {
    CAPTURE(name);
    std::string out;
    CHECK(shardkit::testing::run_command(example(name) + " --help", &out) == 0);
    CHECK(out.find("--log-every N") != std::string::npos);
    CHECK(out.find("--batch-size N") != std::string::npos);
    CHECK(out.find("(default 32)") != std::string::npos);
    // Real datasets, so that what a flag was left to do would run: refused before any step.
    const std::string run =
        example(name) +
        (std::string(name) == "train_mlm"
             ? " --data " + (tmp / "lm").string() + " --mask-id 3 --vocab-size 100 --max-steps 3"
             : " --train " + (tmp / "cls").string() + " --valid " + (tmp / "cls").string()) +
        " --epochs 1 --threads 1";
    CHECK(shardkit::testing::run_command(run + " --log-evry 100", &out) == 2);
    CHECK_MESSAGE(
        out.find("unknown flag --log-evry; did you mean --log-every?") != std::string::npos, out);
    // A progress line every 0 steps divided by zero (SIGFPE) in train_mlm.
    CHECK(shardkit::testing::run_command(run + " --log-every 0", &out) == 2);
    CHECK_MESSAGE(out.find("--log-every must be at least 1, not 0") != std::string::npos, out);
    CHECK(shardkit::testing::run_command(run + " --batch-size x", &out) == 2);
    CHECK_MESSAGE(out.find("--batch-size takes an integer, not 'x'") != std::string::npos, out);
  }
}

TEST_CASE("the examples refuse what would train nothing or index past the model") {
  TempDir tmp("ex");
  write_classification(tmp / "cls", 200, 1);
  write_classification(tmp / "other", 200, 2, {"neg", "neutral", "pos"});
  write_progressions(tmp / "lm", 200);
  const std::string classifier = example("train_classifier") + " --train " +
                                 (tmp / "cls").string() + " --epochs 1 --threads 1 --valid ";
  std::string out;
  // Every step is a full batch: a batch larger than the dataset made "0 batches" and exit 0.
  CHECK(shardkit::testing::run_command(classifier + (tmp / "cls").string() + " --batch-size 1000",
                                       &out) == 2);
  CHECK_MESSAGE(out.find("holds no full batch of 1000 (200 records): lower --batch-size") !=
                    std::string::npos,
                out);
  // Held-out labels of other names were scored against the training classes.
  CHECK(shardkit::testing::run_command(classifier + (tmp / "other").string(), &out) == 2);
  CHECK_MESSAGE(out.find("has other label names than --train") != std::string::npos, out);
  // Fewer classes than the data holds ended in libtorch's "Target 2 is out of bounds".
  CHECK(shardkit::testing::run_command(classifier + (tmp / "cls").string() + " --num-labels 2",
                                       &out) == 2);
  CHECK_MESSAGE(
      out.find("--num-labels 2 is below the training set's 3 labels") != std::string::npos, out);
  // One step, and fewer steps than --log-every: the RESULT line still reports their loss.
  REQUIRE(shardkit::testing::run_command(classifier + (tmp / "cls").string() + " --batch-size 200",
                                         &out) == 0);
  CHECK_MESSAGE(field(out, "first_train_loss") > 0, out);
  REQUIRE(shardkit::testing::run_command(example("train_mlm") + " --data " + (tmp / "lm").string() +
                                             " --mask-id 3 --vocab-size 100 --epochs 1 "
                                             "--max-steps 4 --log-every 5 --threads 1",
                                         &out) == 0);
  CHECK_MESSAGE(field(out, "first_mlm_loss") > 0, out);
  CHECK_MESSAGE(field(out, "last_mlm_loss") > 0, out);
  CHECK(shardkit::testing::run_command(example("train_mlm") + " --data " + (tmp / "lm").string() +
                                           " --vocab-size 100 --max-steps 1",
                                       &out) == 2);
  CHECK_MESSAGE(
      out.find("manifest does not say the [MASK] id: give --mask-id\n") != std::string::npos, out);
}
