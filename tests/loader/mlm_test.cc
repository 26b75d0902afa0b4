// MLM masking follows BERT's recipe, never touches special tokens or padding, and is a pure
// function of (seed, epoch, record): thread count, batch size and resume do not change it.
#include <doctest/doctest.h>

#include <map>
#include <set>

#include "loader/loader.h"
#include "loader_fixture.h"
#include "test_util.h"

using namespace shardkit;
using namespace shardkit::loader;
using shardkit::testing::TempDir;
namespace t = shardkit::testing;

namespace {

LoaderOptions mlm_options() {
  LoaderOptions o;
  o.fields = {"input_ids", "length"};  // the stored labels would clash with MLM's
  o.mlm.enabled = true;
  o.mlm.mask_token_id = 3;
  o.mlm.vocab_size = 1000;
  o.mlm.special_ids = {0, 1, 2};
  o.seed = 77;
  return o;
}

// record -> its masked input ids and labels (real positions only).
using Masked = std::map<uint64_t, std::pair<std::vector<int64_t>, std::vector<int64_t>>>;

Masked collect(Loader& loader, size_t max_batches = SIZE_MAX) {
  Masked out;
  size_t n = 0;
  while (n++ < max_batches) {
    auto b = loader.next();
    if (!b) break;
    const Column& ids = b->at("input_ids");
    const Column& labels = b->at("labels");
    const int64_t t_len = ids.shape()[1];
    for (size_t r = 0; r < b->size(); ++r) {
      auto& [i, l] = out[b->records[r]];
      for (int64_t j = 0; j < t_len; ++j) {
        i.push_back(ids.get(r * t_len + j));
        l.push_back(labels.get(r * t_len + j));
      }
    }
  }
  return out;
}

// Rows may be padded to different widths in different batch layouts; compare real tokens.
bool same_real(const Masked& a, const Masked& b) {
  for (const auto& [rec, v] : a) {
    auto it = b.find(rec);
    if (it == b.end()) return false;
    const size_t len = t::fixture_length(rec);
    for (size_t j = 0; j < len; ++j)
      if (v.first[j] != it->second.first[j] || v.second[j] != it->second.second[j]) return false;
  }
  return true;
}

}  // namespace

TEST_CASE("MLM selects 15% of real tokens, 80/10/10, never specials or padding") {
  TempDir tmp("mlm");
  t::write_fixture(tmp / "ds", {.records = 4000});
  LoaderOptions o = mlm_options();
  o.batch_size = 64;
  Loader loader(tmp / "ds", o);
  const Masked m = collect(loader);
  REQUIRE(m.size() == 4000);
  uint64_t candidates = 0, selected = 0, masked = 0, random = 0, kept = 0;
  for (const auto& [rec, v] : m) {
    const auto& [ids, labels] = v;
    for (size_t j = 0; j < ids.size(); ++j) {
      const int64_t original = t::fixture_token(rec, static_cast<uint32_t>(j));
      const bool special = original <= 2;
      if (labels[j] == -100) {
        REQUIRE(ids[j] == original);  // unselected tokens are untouched
        if (!special) ++candidates;
        continue;
      }
      REQUIRE(!special);  // specials and padding (0) are never selected
      REQUIRE(labels[j] == original);
      ++candidates;
      ++selected;
      if (ids[j] == 3)
        ++masked;
      else if (ids[j] == original)
        ++kept;
      else
        ++random;
    }
  }
  const double share = double(selected) / double(candidates);
  CAPTURE(candidates);
  CHECK(share > 0.14);
  CHECK(share < 0.16);
  CHECK(double(masked) / selected == doctest::Approx(0.8).epsilon(0.03));
  CHECK(double(random) / selected == doctest::Approx(0.1).epsilon(0.12));
  CHECK(double(kept) / selected == doctest::Approx(0.1).epsilon(0.12));
}

TEST_CASE("MLM masks the same tokens for any thread count, batch size and resume point") {
  TempDir tmp("mlm");
  t::write_fixture(tmp / "ds", {.records = 700, .block_bytes = 3000});
  LoaderOptions o = mlm_options();
  o.batch_size = 16;
  o.threads = 1;
  Loader a(tmp / "ds", o);
  a.set_epoch(2);
  const Masked reference = collect(a);
  REQUIRE(reference.size() == 700);

  o.threads = 3;
  o.batch_size = 50;  // another layout: rows land in other batches with other padding
  Loader b(tmp / "ds", o);
  b.set_epoch(2);
  CHECK(same_real(reference, collect(b)));

  o.batch_size = 16;
  LoaderState saved;
  Masked first;
  {
    Loader c(tmp / "ds", o);
    c.set_epoch(2);
    first = collect(c, 11);
    saved = c.state();
  }
  Loader d(tmp / "ds", o);
  d.restore(saved);
  Masked rest = collect(d);
  first.insert(rest.begin(), rest.end());
  CHECK(first.size() == 700);
  CHECK(same_real(reference, first));

  // Another epoch masks differently.
  Loader e(tmp / "ds", o);
  e.set_epoch(3);
  CHECK(!same_real(reference, collect(e)));
}

// A mixture masks each draw on its own: the same record of two sources, or of two passes over a
// repeated source, gets its own masks; a single source stays as it was; resuming with other
// threads and world size masks every draw the same way.
TEST_CASE("MLM in a mixture keys masks by source and pass, and resumes exactly") {
  TempDir tmp("mlm");
  t::write_fixture(tmp / "a", {.records = 300, .block_bytes = 3000});
  t::write_fixture(tmp / "b", {.records = 300, .block_bytes = 3000});
  LoaderOptions o = mlm_options();
  o.batch_size = 20;
  o.threads = 2;

  // (source, record) -> the real ids and labels of each draw of it.
  using Draws = std::map<std::pair<uint32_t, uint64_t>, std::multiset<std::vector<int64_t>>>;
  auto draw = [](Loader& loader, size_t max_batches, Draws& out) {
    for (size_t n = 0; n < max_batches; ++n) {
      auto b = loader.next();
      if (!b) return;
      const Column& ids = b->at("input_ids");
      const Column& labels = b->at("labels");
      const int64_t width = ids.shape()[1];
      for (size_t r = 0; r < b->size(); ++r) {
        const uint64_t rec = b->records[r];
        std::vector<int64_t> v;
        for (size_t j = 0; j < t::fixture_length(rec); ++j) {
          const int64_t original = t::fixture_token(rec, static_cast<uint32_t>(j));
          const int64_t id = ids.get(r * width + j), label = labels.get(r * width + j);
          REQUIRE((label == -100 ? id == original : label == original));
          v.push_back(id);
          v.push_back(label);
        }
        out[{b->sources[r], rec}].insert(std::move(v));
      }
    }
  };

  // Source "a" read twice per epoch beside "b" once.
  const std::vector<MixtureSource> mix{{(tmp / "a").string(), {}, 2.0, {}},
                                       {(tmp / "b").string(), {}, 1.0, {}}};
  Loader whole(mix, o);
  whole.set_epoch(1);
  Draws reference;
  draw(whole, SIZE_MAX, reference);
  REQUIRE(reference.size() == 600);

  size_t same_source = 0, same_pass = 0;
  for (uint64_t rec = 0; rec < 300; ++rec) {
    const auto& twice = reference.at({0, rec});
    REQUIRE(twice.size() == 2);
    same_pass += *twice.begin() == *twice.rbegin();
    same_source += twice.count(*reference.at({1, rec}).begin());
  }
  // A short record can come out unmasked in both draws; most do not.
  CAPTURE(same_source);
  CAPTURE(same_pass);
  CHECK(same_source < 60);
  CHECK(same_pass < 60);

  // The first pass over "a" is masked as "a" alone is: a single dataset keeps its masks.
  Loader single(tmp / "a", o);
  single.set_epoch(1);
  Draws alone;
  draw(single, SIZE_MAX, alone);
  for (uint64_t rec = 0; rec < 300; ++rec)
    CHECK(reference.at({0, rec}).count(*alone.at({0, rec}).begin()) >= 1);

  // Resumed at batch 13 with other threads and world size 4 (whose steps divide the 640 samples
  // left, so no rank wraps): every draw masked the same way.
  Draws resumed;
  LoaderState saved;
  {
    Loader first(mix, o);
    first.set_epoch(1);
    draw(first, 13, resumed);
    saved = first.state();
  }
  for (uint32_t rank = 0; rank < 4; ++rank) {
    LoaderOptions p = o;
    p.threads = 1;
    p.world_size = 4;
    p.rank = rank;
    Loader rest(mix, p);
    rest.restore(saved);
    draw(rest, SIZE_MAX, resumed);
  }
  CHECK(resumed == reference);
}
