// MLM masking follows BERT's recipe, never touches special tokens or padding, and is a pure
// function of (seed, epoch, record): thread count, batch size and resume do not change it.
#include <doctest/doctest.h>

#include <map>

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
