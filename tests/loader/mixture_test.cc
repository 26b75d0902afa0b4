// A Loader over several sources: one source with weight 1 is today's stream exactly; every
// prefix of a mixture's stream holds each source's share to within one sample; each source's
// samples come in that dataset's own order, wrapping into fresh permutations; the stream does
// not depend on threads and resumes exactly with other threads and world sizes; incompatible
// datasets are refused; max_samples and max_tokens end epochs equally on every rank.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <set>

#include "core/error.h"
#include "core/manifest.h"
#include "loader/fingerprint.h"
#include "loader/loader.h"
#include "loader/mixture_spec.h"
#include "loader_fixture.h"
#include "test_util.h"

using namespace shardkit;
using namespace shardkit::loader;
using shardkit::testing::TempDir;
namespace t = shardkit::testing;

namespace {

struct Row {
  uint32_t source;
  uint64_t record;
  bool operator==(const Row&) const = default;
};

// The rows delivered, in order; checks each row's data against its source's fixture.
std::vector<Row> drain(Loader& loader, const std::vector<int64_t>& label_base,
                       std::vector<size_t>* batch_sizes = nullptr, size_t max_batches = SIZE_MAX) {
  std::vector<Row> rows;
  for (size_t b = 0; b < max_batches; ++b) {
    auto batch = loader.next();
    if (!batch) break;
    if (batch_sizes) batch_sizes->push_back(batch->size());
    const Column& labels = batch->at("labels");
    const Column* source = batch->find("source");
    const Column& ids = batch->at("input_ids");
    const int64_t width = ids.shape()[1];
    for (size_t r = 0; r < batch->size(); ++r) {
      const uint32_t s = batch->sources[r];
      const uint64_t rec = batch->records[r];
      REQUIRE(labels.get(r) == label_base[s] + static_cast<int64_t>(rec));
      if (source) REQUIRE(source->get(r) == s);
      for (int64_t j = 0; j < std::min<int64_t>(width, 4); ++j)
        REQUIRE(ids.get(r * width + j) == t::fixture_token(rec, static_cast<uint32_t>(j)));
      rows.push_back({s, rec});
    }
  }
  return rows;
}

std::vector<uint64_t> records_of(const std::vector<Row>& rows, uint32_t source) {
  std::vector<uint64_t> out;
  for (const Row& r : rows)
    if (r.source == source) out.push_back(r.record);
  return out;
}

// Three fixtures of different sizes, labels offset so rows tell their dataset.
struct Three {
  TempDir tmp{"mix"};
  std::vector<int64_t> bases{0, 100000, 200000};
  std::vector<uint64_t> sizes{700, 300, 130};
  Three() {
    for (size_t i = 0; i < 3; ++i)
      t::write_fixture(
          path(i),
          {.records = sizes[i], .block_bytes = 3000, .shard_bytes = 20000, .label_base = bases[i]});
  }
  std::string path(size_t i) const { return (tmp / ("ds" + std::to_string(i))).string(); }
  std::vector<MixtureSource> weighted(std::vector<double> w) const {
    std::vector<MixtureSource> s;
    for (size_t i = 0; i < w.size(); ++i) s.push_back({path(i), w[i], {}, {}});
    return s;
  }
};

LoaderOptions options(uint64_t batch, uint64_t seed, unsigned threads) {
  LoaderOptions o;
  o.batch_size = batch;
  o.seed = seed;
  o.threads = threads;
  o.window_blocks = 3;  // explicit, so a source's order does not depend on the budget's split
  o.source_field = true;
  return o;
}

}  // namespace

TEST_CASE("one source with weight 1 (or repeat 1, or none) is exactly the single-dataset stream") {
  Three three;
  for (uint32_t world : {1u, 3u}) {
    LoaderOptions o = options(16, 77, 2);
    o.world_size = world;
    o.rank = world - 1;
    o.source_field = false;
    Loader single(three.path(0), o);
    single.set_epoch(2);
    std::vector<size_t> single_sizes;
    const auto want = drain(single, three.bases, &single_sizes);
    REQUIRE(!want.empty());
    for (const MixtureSource& src :
         {MixtureSource{three.path(0), 1.0, {}, {}}, MixtureSource{three.path(0), {}, 1.0, {}},
          MixtureSource{three.path(0), {}, {}, {}}}) {
      Loader mixed(std::vector<MixtureSource>{src}, o);
      CHECK(mixed.window_blocks() == single.window_blocks());
      mixed.set_epoch(2);
      std::vector<size_t> sizes;
      CHECK(drain(mixed, three.bases, &sizes) == want);
      CHECK(sizes == single_sizes);
    }
  }
  // And with the default window (derived from the budget): one source gets all of it.
  LoaderOptions o;
  o.seed = 3;
  Loader a(three.path(0), o), b(std::vector<MixtureSource>{{three.path(0), 1.0, {}, {}}}, o);
  CHECK(drain(a, three.bases) == drain(b, three.bases));
}

TEST_CASE("every prefix of the stream holds each source's share to within one sample") {
  Three three;
  const std::vector<double> weights{0.5, 0.3, 0.2};
  Loader loader(three.weighted(weights), options(24, 5, 3));
  loader.set_epoch(1);
  CHECK(loader.epoch_samples() == 700 + 300 + 130);
  const auto rows = drain(loader, three.bases);
  REQUIRE(rows.size() == 1130);
  std::vector<double> count(3, 0);
  for (size_t k = 0; k < rows.size(); ++k) {
    ++count[rows[k].source];
    for (size_t s = 0; s < 3; ++s)
      if (!(std::abs(count[s] - weights[s] * double(k + 1)) < 1.0 + 1e-6))
        FAIL("after " << k + 1 << " samples source " << s << " has " << count[s]);
  }
  // 0.2 x 1130 = 226 samples from a 130-record source: one whole pass in the dataset's own
  // order, then a different permutation of all of it, cut at 96.
  LoaderOptions single = options(1, 5, 1);
  single.source_field = false;
  for (size_t s = 0; s < 3; ++s) {
    Loader alone(three.path(s), single);
    alone.set_epoch(1);
    std::vector<uint64_t> own;
    for (const Row& r : drain(alone, {three.bases[s]})) own.push_back(r.record);
    const std::vector<uint64_t> got = records_of(rows, static_cast<uint32_t>(s));
    const size_t first_pass = std::min(got.size(), own.size());
    CHECK(std::vector<uint64_t>(got.begin(), got.begin() + first_pass) ==
          std::vector<uint64_t>(own.begin(), own.begin() + first_pass));
    if (got.size() > own.size()) {
      const std::vector<uint64_t> second(got.begin() + own.size(), got.end());
      CHECK(std::set<uint64_t>(second.begin(), second.end()).size() == second.size());
      CHECK(second != std::vector<uint64_t>(own.begin(), own.begin() + second.size()));
    }
  }
}

TEST_CASE("repeat and choose: exact counts per epoch, fresh permutation per pass") {
  Three three;
  std::vector<MixtureSource> sources = {
      {three.path(0), {}, {}, 100}, {three.path(1), {}, 0.5, {}}, {three.path(2), {}, 2.5, {}}};
  Loader loader(sources, options(10, 9, 2));
  CHECK(loader.epoch_samples() == 100 + 150 + 325);
  const auto rows = drain(loader, three.bases);
  REQUIRE(rows.size() == 575);
  const std::vector<uint64_t> small = records_of(rows, 2);
  CHECK(records_of(rows, 0).size() == 100);
  CHECK(records_of(rows, 1).size() == 150);
  REQUIRE(small.size() == 325);
  // Passes 0 and 1 each visit all 130 records once, in different orders; pass 2 takes 65.
  for (size_t pass = 0; pass < 2; ++pass) {
    const std::set<uint64_t> seen(small.begin() + pass * 130, small.begin() + (pass + 1) * 130);
    CHECK(seen.size() == 130);
  }
  CHECK(!std::equal(small.begin(), small.begin() + 130, small.begin() + 130));
  // Exact weights choose_i / total at every prefix.
  std::vector<uint64_t> count(3, 0);
  const uint64_t chosen[3] = {100, 150, 325};
  for (size_t k = 0; k < rows.size(); ++k) {
    ++count[rows[k].source];
    for (size_t s = 0; s < 3; ++s) {
      const double lag = std::abs(double(count[s]) - double(chosen[s]) * double(k + 1) / 575.0);
      if (!(lag < 1.0 + 1e-9)) FAIL("after " << k + 1 << " samples source " << s);
    }
  }
}

TEST_CASE(
    "a mixture's stream does not depend on threads; it resumes with other threads and "
    "world sizes") {
  Three three;
  const auto sources = three.weighted({2, 1, 1});
  std::vector<Row> reference;
  for (unsigned threads : {1u, 2u, 5u}) {
    Loader loader(sources, options(12, 4, threads));
    loader.set_epoch(3);
    const auto rows = drain(loader, three.bases);
    if (reference.empty()) reference = rows;
    CHECK(rows == reference);
  }
  // Global steps of world 2 x batch 12; resume at random steps with world 3 x 8 or 6 x 4.
  auto run = [&](uint32_t world, uint64_t batch, const LoaderState* from, size_t steps,
                 unsigned threads) {
    std::vector<std::unique_ptr<Loader>> ranks;
    for (uint32_t r = 0; r < world; ++r) {
      LoaderOptions o = options(batch, 4, threads);
      o.world_size = world;
      o.rank = r;
      o.drop_last = true;
      o.max_tokens = 9000;
      ranks.push_back(std::make_unique<Loader>(sources, o));
      if (from)
        ranks.back()->restore(*from);
      else
        ranks.back()->set_epoch(3);
    }
    std::vector<std::vector<Row>> out;
    for (size_t s = 0; s < steps; ++s) {
      std::vector<Row> step;
      size_t ended = 0;
      for (auto& l : ranks) {
        const auto rows = drain(*l, three.bases, nullptr, 1);
        if (rows.empty()) ++ended;
        step.insert(step.end(), rows.begin(), rows.end());
      }
      REQUIRE((ended == 0 || ended == ranks.size()));  // ranks end on the same step
      if (ended) break;
      out.push_back(step);
    }
    std::vector<LoaderState> states;
    for (auto& l : ranks) states.push_back(l->state());
    for (const LoaderState& s : states) CHECK(s == states[0]);
    return std::make_pair(out, states[0]);
  };
  const auto [whole, end_state] = run(2, 12, nullptr, 1000, 2);
  REQUIRE(whole.size() > 4);
  // drop_last drops the short step that the budget's sample ends, as any short last step: the
  // epoch delivers just under max_tokens, and its state says it is over.
  CHECK(end_state.tokens_consumed < 9000);
  CHECK(end_state.tokens_consumed + 24 * t::kSeqLen >= 9000);
  CHECK(end_state.samples_consumed == 1130);
  std::mt19937_64 rng(11);
  for (int trial = 0; trial < 4; ++trial) {
    const size_t cut = 1 + rng() % (whole.size() - 1);
    const auto [head, mid] = run(2, 12, nullptr, cut, 1 + trial % 3);
    CHECK(mid.samples_consumed == cut * 24);
    const bool three_ranks = trial % 2 == 0;
    const auto [tail, end2] =
        run(three_ranks ? 3 : 6, three_ranks ? 8 : 4, &mid, 1000, 3 - trial % 3);
    REQUIRE(head.size() + tail.size() == whole.size());
    for (size_t i = 0; i < tail.size(); ++i) CHECK(tail[i] == whole[cut + i]);
    CHECK(end2 == end_state);
  }
}

TEST_CASE("weights equal in effect give one stream, and a state of one resumes the other") {
  Three three;
  auto head_and_state = [&](const std::vector<double>& weights) {
    Loader loader(three.weighted(weights), options(12, 4, 2));
    const auto head = drain(loader, three.bases, nullptr, 5);
    return std::make_pair(head, loader.state());
  };
  auto rest_after = [&](const std::vector<double>& weights, const LoaderState& from) {
    Loader loader(three.weighted(weights), options(12, 4, 2));
    loader.restore(from);
    return drain(loader, three.bases);
  };
  Loader whole_loader(three.weighted({2, 1, 1}), options(12, 4, 2));
  const auto whole = drain(whole_loader, three.bases);
  const auto [head, state] = head_and_state({2, 1, 1});
  REQUIRE(head.size() == 60);
  const std::vector<Row> tail(whole.begin() + 60, whole.end());
  // Scaled by 2 and by a quarter: the same shares, so the same stream, and one fingerprint.
  for (const std::vector<double>& same : {std::vector<double>{4, 2, 2}, {0.5, 0.25, 0.25}}) {
    CAPTURE(same[0]);
    CHECK(head_and_state(same).second.fingerprint == state.fingerprint);
    CHECK(rest_after(same, state) == tail);
  }
  // Other shares are another order, refused naming the weights.
  CHECK_THROWS_WITH_AS(rest_after({2, 1, 2}, state), doctest::Contains("mixture's weights"), Error);
  // A state saved before shares were hashed carries its weights as written: it resumes with
  // those weights, and (as then) not with others equal in effect, which it cannot know.
  std::vector<Manifest> manifests;
  for (size_t i = 0; i < 3; ++i) manifests.push_back(Manifest::load(three.path(i)));
  const std::vector<const Manifest*> pointers = {&manifests[0], &manifests[1], &manifests[2]};
  LoaderState saved_before = state;
  saved_before.fingerprint =
      stream_fingerprints(pointers, three.weighted({2, 1, 1}), options(12, 4, 2)).written_weights;
  REQUIRE(saved_before.fingerprint != state.fingerprint);
  CHECK(rest_after({2, 1, 1}, saved_before) == tail);
  CHECK_THROWS_WITH_AS(rest_after({4, 2, 2}, saved_before), doctest::Contains("mixture's weights"),
                       Error);
}

TEST_CASE("max_tokens ends the epoch after the step that reaches it, on every rank") {
  Three three;
  for (uint64_t budget : {1ull, 5000ull, 20000ull, 10000000ull}) {
    std::vector<std::vector<Row>> per_rank;
    std::vector<uint64_t> batches;
    for (uint32_t r = 0; r < 3; ++r) {
      LoaderOptions o = options(7, 8, 2);
      o.world_size = 3;
      o.rank = r;
      o.max_tokens = budget;
      Loader loader(three.weighted({1, 1, 1}), o);
      std::vector<size_t> sizes;
      per_rank.push_back(drain(loader, three.bases, &sizes));
      batches.push_back(sizes.size());
      CHECK(loader.state().tokens_consumed >= std::min<uint64_t>(budget, 1));
    }
    CHECK(batches[0] == batches[1]);
    CHECK(batches[1] == batches[2]);
    // Tokens of each global step, from the fixture's formula.
    std::vector<uint64_t> step_tokens(batches[0], 0);
    for (const auto& rows : per_rank)
      for (size_t i = 0; i < rows.size(); ++i)
        step_tokens[i / 7] += t::fixture_length(rows[i].record);
    uint64_t before_last = 0;
    for (size_t s = 0; s + 1 < step_tokens.size(); ++s) before_last += step_tokens[s];
    const uint64_t total = before_last + step_tokens.back();
    if (budget < 10000000) {
      CHECK(before_last < budget);
      CHECK(total >= budget);
    } else {
      CHECK(batches[0] == (1130 + 20) / 21);  // the samples ran out first
    }
  }
}

TEST_CASE("max_samples cuts one dataset's epoch and sets a weighted mixture's length") {
  Three three;
  LoaderOptions o = options(10, 2, 2);
  o.source_field = false;
  Loader full(three.path(0), o);
  const auto all = drain(full, three.bases);
  o.max_samples = 333;
  Loader cut(three.path(0), o);
  CHECK(cut.epoch_samples() == 333);
  const auto head = drain(cut, three.bases);
  CHECK(head.size() == 333);
  CHECK(std::equal(head.begin(), head.end(), all.begin()));
  // Weighted: 4000 samples from 1130 records, each source wrapping.
  o.max_samples = 4000;
  o.source_field = true;
  Loader mix(three.weighted({1, 1, 2}), o);
  const auto rows = drain(mix, three.bases);
  CHECK(rows.size() == 4000);
  CHECK(records_of(rows, 2).size() == 2000);
  // Ranks get equal steps when the budget is not a multiple of the global batch.
  o.max_samples = 95;
  o.world_size = 4;
  std::set<size_t> steps;
  for (uint32_t r = 0; r < 4; ++r) {
    o.rank = r;
    Loader l(three.weighted({1, 1, 2}), o);
    std::vector<size_t> sizes;
    drain(l, three.bases, &sizes);
    steps.insert(sizes.size());
  }
  CHECK(steps == std::set<size_t>{3});
}

TEST_CASE("datasets that cannot be mixed are refused, naming both and the difference") {
  TempDir tmp("mixbad");
  t::write_fixture(tmp / "cls", {.records = 50, .task = "cls"});
  t::write_fixture(tmp / "lm", {.records = 50, .task = "lm"});
  t::write_fixture(tmp / "extra", {.records = 50, .with_length_a = true, .label_base = 7});
  t::write_fixture(tmp / "plain", {.records = 60});
  const std::string cls = (tmp / "cls").string(), lm = (tmp / "lm").string();
  try {
    Loader l(std::vector<MixtureSource>{{cls, 1.0, {}, {}}, {lm, 1.0, {}, {}}}, {});
    FAIL("a cls + lm mixture was accepted");
  } catch (const Error& e) {
    const std::string what = e.what();
    CAPTURE(what);
    CHECK(e.code() == ErrorCode::kInvalidArgument);
    CHECK(what.find(cls) != std::string::npos);
    CHECK(what.find(lm) != std::string::npos);
    CHECK(what.find("task 'cls'") != std::string::npos);
    CHECK(what.find("'lm'") != std::string::npos);
  }
  // Weights on some sources only; two of weight/repeat/choose.
  CHECK_THROWS_AS(Loader(std::vector<MixtureSource>{{cls, 1.0, {}, {}}, {cls, {}, 2.0, {}}}, {}),
                  Error);
  CHECK_THROWS_AS(Loader(std::vector<MixtureSource>{{cls, 1.0, 2.0, {}}}, {}), Error);
  CHECK_THROWS_AS(Loader(std::vector<MixtureSource>{{cls, -1.0, {}, {}}, {cls, 1.0, {}, {}}}, {}),
                  Error);
  // Sources that give no sample at all (choose 0, repeat 0, a repeat that rounds to no record):
  // refused naming repeat and choose, rather than an epoch without a batch.
  for (const auto& none : {std::vector<MixtureSource>{{cls, {}, 0.0, {}}, {cls, {}, {}, 0}},
                           std::vector<MixtureSource>{{cls, {}, 0.001, {}}}}) {
    try {
      Loader l(none, {});
      FAIL("a mixture without samples was accepted");
    } catch (const Error& e) {
      const std::string what = e.what();
      CAPTURE(what);
      CHECK(e.code() == ErrorCode::kInvalidArgument);
      CHECK(what.find("repeat") != std::string::npos);
      CHECK(what.find("choose") != std::string::npos);
    }
  }

  // Different layouts with the fields a batch reads in common: rows are repacked.
  const std::string plain = (tmp / "plain").string(), extra = (tmp / "extra").string();
  LoaderOptions o = options(8, 1, 2);
  o.fields = {"input_ids", "length", "labels"};
  Loader ok(std::vector<MixtureSource>{{plain, 1.0, {}, {}}, {extra, 1.0, {}, {}}}, o);
  const auto rows = drain(ok, {0, 7});
  CHECK(rows.size() == 110);
  CHECK(records_of(rows, 1).size() == 55);
  // Asking for a field only one of them has is refused with both names.
  o.fields = {"input_ids", "length_a"};
  try {
    Loader l(std::vector<MixtureSource>{{extra, 1.0, {}, {}}, {plain, 1.0, {}, {}}}, o);
    FAIL("a field missing from one source was accepted");
  } catch (const Error& e) {
    const std::string what = e.what();
    CAPTURE(what);
    CHECK(what.find("length_a") != std::string::npos);
    CHECK(what.find(plain) != std::string::npos);
    CHECK(what.find(extra) != std::string::npos);
  }
}

TEST_CASE("mixture specs: repeated keys and overflowing weights are refused; schedules parse") {
  auto refused = [](const std::string& json, const std::string& why) {
    try {
      parse_mixture_spec(json, "spec.json", "/data");
      FAIL("accepted: " << json);
    } catch (const Error& e) {
      const std::string what = e.what();
      CAPTURE(what);
      CHECK(what.find("spec.json") != std::string::npos);
      CHECK(what.find(why) != std::string::npos);
    }
  };
  // A repeated key anywhere: which value counts would depend on the reader.
  refused(R"({"sources": [{"path": "a"}], "sources": [{"path": "b"}]})",
          "\"sources\" appears twice");
  refused(R"({"sources": [{"path": "a", "weight": 1, "weight": 9}]})", "\"weight\" appears twice");
  refused(R"({"sources": [{"path": "a", "path": "b"}]})", "\"path\" appears twice");
  refused(R"({"seed": 1, "seed": 2, "sources": [{"path": "a"}]})", "\"seed\" appears twice");
  refused(R"({"sources": [{"path": "a"}, {"path": "b"}], "schedule": [{"at_samples": 0,
             "weights": [1, 1], "weights": [1, 0]}]})",
          "\"weights\" appears twice");
  // Schedules: one axis, a weight per source, whole positions.
  refused(R"({"sources": [{"path": "a"}, {"path": "b"}], "schedule": [{"at_samples": 0,
             "weights": [1]}]})",
          "one weight per source");
  refused(R"({"sources": [{"path": "a"}, {"path": "b"}], "schedule": [{"at_samples": 0,
             "weights": [1, 1]}, {"at_tokens": 9, "weights": [1, 1]}]})",
          "same axis");
  refused(R"({"sources": [{"path": "a"}], "schedule": [{"at_tokens": 0.5, "weights": [1]}]})",
          "whole number");
  refused(R"({"sources": [{"path": "a"}], "interpolation": "linear"})", "belong to a");
  const MixtureSpec spec = parse_mixture_spec(
      R"({"sources": [{"path": "web"}, {"path": "s3://b/code"}], "interpolation": "linear",
          "schedule": [{"at_tokens": 0, "weights": [0.9, 0.1]},
                       {"at_tokens": 2e9, "weights": [0.5, 0.5]}], "tokens_per_sample": 2048})",
      "spec.json", "/data");
  REQUIRE(spec.sources.size() == 2);
  CHECK(spec.sources[0].path == "/data/web");
  REQUIRE(spec.sources[1].schedule);
  const WeightSchedule& w = *spec.sources[1].schedule;
  CHECK(w.axis == ScheduleAxis::kTokens);
  CHECK(w.linear);
  CHECK(w.tokens_per_sample == 2048);
  REQUIRE(w.points.size() == 2);
  CHECK(w.points[1].at == 2000000000);
  CHECK(w.points[1].weight == 0.5);
  CHECK(spec.sources[0].schedule->points[0].weight == 0.9);
  // [1e308, 1e308] sums to infinity: refused rather than read as all from one source.
  Three three;
  CHECK_THROWS_WITH_AS(Loader(three.weighted({1e308, 1e308}), options(8, 1, 1)),
                       doctest::Contains("scale them down"), Error);
}

TEST_CASE(
    "a scheduled mixture in tokens: shares follow the schedule; resumes at other topologies") {
  Three three;
  // 0.7/0.2/0.1 ramping to 0.1/0.3/0.6 between sample 100 and 600 (48 tokens a sample: the
  // fixture's row length), then held.
  std::vector<MixtureSource> sources;
  const double w0[3] = {0.7, 0.2, 0.1}, w1[3] = {0.1, 0.3, 0.6};
  for (size_t i = 0; i < 3; ++i) {
    WeightSchedule w;
    w.axis = ScheduleAxis::kTokens;
    w.linear = true;
    w.points = {{0, w0[i]}, {100 * 48, w0[i]}, {600 * 48 - 47, w1[i]}};
    sources.push_back({three.path(i), {}, {}, {}, w});
  }
  auto run = [&](uint32_t world, uint64_t batch, const LoaderState* from, size_t steps) {
    std::vector<std::unique_ptr<Loader>> ranks;
    for (uint32_t r = 0; r < world; ++r) {
      LoaderOptions o = options(batch, 6, 2);
      o.world_size = world;
      o.rank = r;
      ranks.push_back(std::make_unique<Loader>(sources, o));
      if (from) ranks.back()->restore(*from);
    }
    std::vector<Row> rows;
    for (size_t s = 0; s < steps; ++s) {
      size_t got = 0;
      for (auto& l : ranks) {
        const auto step = drain(*l, three.bases, nullptr, 1);
        got += step.size();
        rows.insert(rows.end(), step.begin(), step.end());
      }
      if (!got) break;
    }
    return std::make_pair(rows, ranks[0]->state());
  };
  const auto [whole, end] = run(1, 40, nullptr, 1000);
  REQUIRE(whole.size() == 1130);
  std::vector<double> count(3, 0), integral(3, 0);
  for (size_t k = 0; k < whole.size(); ++k) {
    ++count[whole[k].source];
    for (size_t i = 0; i < 3; ++i) {
      // The share at the middle of sample k (exact for a linear piece).
      const double x = double(k) + 0.5, t = std::clamp((x - 100) / 500, 0.0, 1.0);
      integral[i] += w0[i] + (w1[i] - w0[i]) * t;
      if (!(std::abs(count[i] - integral[i]) < 1 + 1e-6))
        FAIL("after " << k + 1 << " samples source " << i << " has " << count[i] << ", not "
                      << integral[i]);
    }
  }
  // Saved at 2 x 24, resumed at 3 x 7 and 5 x 11: the rest of the stream, in order.
  for (size_t cut : {3u, 11u, 20u}) {
    const auto [head, mid] = run(2, 24, nullptr, cut);
    REQUIRE(mid.samples_consumed == cut * 48);
    for (auto [world, batch] : {std::pair{3u, 7u}, std::pair{5u, 11u}}) {
      auto [tail, last] = run(world, batch, &mid, 1000);
      // The last step pads by wrapping to the epoch's first positions: drop that padding.
      tail.resize(std::min(tail.size(), whole.size() - head.size()));
      std::vector<Row> joined = head;
      joined.insert(joined.end(), tail.begin(), tail.end());
      CHECK(joined == whole);
      CHECK(last.samples_consumed == 1130);
    }
  }
}
