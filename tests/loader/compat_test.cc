// Datasets written by shardkit 0.1 (manifest format_version 1, tests/data/compat_v1) keep
// opening, with the records and the sample orders that build recorded, and their metadata keys
// read back as the same DatasetInfo a current conversion would describe.
#include <doctest/doctest.h>
#include <simdjson.h>

#include <sstream>

#include "core/dataset.h"
#include "core/record_json.h"
#include "loader/loader.h"
#include "test_util.h"

namespace fs = std::filesystem;
using shardkit::Dataset;
using shardkit::FieldRole;
using shardkit::Task;
using shardkit::Truncation;
namespace t = shardkit::testing;

namespace {

fs::path compat(const std::string& name) {
  return fs::path(SHARDKIT_SOURCE_DIR) / "tests" / "data" / "compat_v1" / name;
}

struct Expected {
  std::vector<std::pair<std::string, std::string>> orders;  // flags, indices
  std::vector<std::string> records;                         // dump --json lines
};

Expected expected(const std::string& name) {
  Expected e;
  std::istringstream in(t::read_file(compat(name + ".expected")));
  std::string line, flags;
  bool dump = false;
  while (std::getline(in, line)) {
    if (line.rfind("# order ", 0) == 0) {
      flags = line.substr(8);
    } else if (line == "# dump") {
      dump = true;
    } else if (dump) {
      e.records.push_back(line);
    } else {
      e.orders.emplace_back(flags, line);
    }
  }
  return e;
}

std::string squeeze(const std::string& text) {
  std::istringstream in(text);
  std::string out, x;
  while (in >> x) out += x + " ";
  return out;
}

}  // namespace

TEST_CASE("0.1 datasets open with their records and sample orders") {
  for (const char* name : {"lm-gpt2", "pair-bert", "qa-bert"}) {
    CAPTURE(name);
    const Expected want = expected(name);
    REQUIRE(want.orders.size() == 4);
    Dataset ds = Dataset::open(compat(name));
    CHECK(ds.manifest().format_version == 1);
    REQUIRE(ds.size() == want.records.size());
    std::vector<unsigned char> record(ds.schema().record_size());
    simdjson::dom::parser a, b;
    for (uint64_t i = 0; i < ds.size(); ++i) {
      ds.read(i, record.data());
      const std::string got = shardkit::record_json(ds.schema(), record.data(), i).dump();
      // Compared as JSON values: the old tool printed the same numbers with its own spacing.
      CHECK(simdjson::minify(a.parse(got).value()) ==
            simdjson::minify(b.parse(want.records[i]).value()));
    }
    for (const auto& [flags, order] : want.orders) {
      CAPTURE(flags);
      std::string out;
      REQUIRE(t::run_command(
                  t::tool_path("shard-inspect") + " order " + compat(name).string() + " " + flags,
                  &out) == 0);
      CHECK(squeeze(out) == squeeze(order));
    }
  }
}

TEST_CASE("0.1 metadata keys read back as DatasetInfo") {
  const auto lm = Dataset::open(compat("lm-gpt2")).info();
  CHECK(lm.task.type == Task::kLm);
  CHECK(lm.task.max_len == 8);
  CHECK(lm.task.packed);
  CHECK(lm.task.separator_id == 50256u);
  CHECK(lm.tokenizer.type == "bpe");
  CHECK(lm.tokenizer.vocab_size == 50257);
  CHECK(lm.tokenizer.special.eos == 50256u);
  REQUIRE(lm.field(FieldRole::kTokenIds));
  CHECK(*lm.field(FieldRole::kTokenIds) == "input_ids");
  CHECK(*lm.field(FieldRole::kLength) == "length");
  REQUIRE(lm.stats);
  CHECK(lm.stats->records == 23);
  CHECK(lm.source.format == "text");
  CHECK(lm.source.doc_sep == "line");

  const auto pair = Dataset::open(compat("pair-bert")).info();
  CHECK(pair.task.type == Task::kPair);
  CHECK(pair.task.truncation == Truncation::kLongestFirst);
  CHECK(pair.labels.names == std::vector<std::string>{"contradiction", "entailment", "neutral"});
  CHECK(pair.source.columns.at("text") == "premise");
  CHECK(pair.source.columns.at("pair") == "hypothesis");
  CHECK(pair.tokenizer.special.mask == 103u);
  CHECK(*pair.field(FieldRole::kTokenTypeIds) == "token_type_ids");
  CHECK(*pair.field(FieldRole::kLabel) == "labels");

  const auto qa = Dataset::open(compat("qa-bert")).info();
  CHECK(qa.task.doc_stride == 16);
  CHECK(qa.task.max_query_len == 16);
  CHECK(*qa.field(FieldRole::kStartPosition) == "start_positions");
  CHECK(*qa.field(FieldRole::kSourceIndex) == "source_index");
}

TEST_CASE("the loader takes MLM's [MASK] id and vocabulary from an old dataset's tokenizer") {
  shardkit::loader::LoaderOptions o;
  o.mlm.enabled = true;
  o.batch_size = 4;
  shardkit::loader::Loader loader(compat("qa-bert"), o);
  uint64_t masked = 0, mask_tokens = 0;
  while (auto batch = loader.next()) {
    const auto& ids = batch->at("input_ids");
    const auto& labels = batch->at("labels");
    for (size_t i = 0; i < ids.elements(); ++i) {
      masked += labels.get(i) != -100;
      mask_tokens += ids.get(i) == 103;  // bert-base-uncased's [MASK], from the old manifest
    }
  }
  CHECK(masked > 20);
  CHECK(mask_tokens > 10);
}
