// Document boundaries of packed lm rows (LoaderOptions::documents), on datasets written by the
// real `shardify --task lm` with GPT-2. The expected boundaries come from the source documents
// and HF tokenizers' ids for each of them (tests/oracle), not from the separators the loader reads.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "core/dataset_writer.h"
#include "core/error.h"
#include "loader/loader.h"
#include "loader_fixture.h"
#include "shardify/shardify_util.h"
#include "test_util.h"

namespace fs = std::filesystem;
using namespace shardkit;
using namespace shardkit::testing;

namespace {

constexpr uint32_t kEndOfText = 50256;  // GPT-2's <|endoftext|>
constexpr uint32_t kMaxLen = 16;

// Texts without quotes or backslashes, so each is a JSON string as it stands.
const std::vector<std::string> kDocs = {
    "Hello world.",
    "A",
    "The quick brown fox jumps over the lazy dog, and then it runs far away into the woods.",
    "Short one",
    "x",
    "Grüße aus Köln, naïve café.",
    "Packing puts several documents in one row of sixteen tokens.",
    "ok",
    "Another fairly long document that surely spans more than a single packed row here.",
    "end",
};

// One token of the packed stream: its id, its document and its offset inside that document.
struct StreamToken {
  uint32_t id;
  size_t doc;
  size_t offset;
};

struct Packed {
  std::vector<std::vector<StreamToken>> rows;
};

// Each document's HF ids plus the separator, end to end, cut into rows of kMaxLen.
Packed expected_rows(const TempDir& tmp, const std::vector<std::string>& docs) {
  std::string lines;
  for (const auto& d : docs) lines += d + "\n";
  write_file(tmp.path() / "docs.txt", lines);
  const auto oracle = run_oracle(gpt2_json(), tmp.path() / "docs.txt", "", "gpt2-docs");
  REQUIRE(oracle.size() == docs.size());
  std::vector<StreamToken> stream;
  simdjson::dom::parser parser;
  for (size_t d = 0; d < docs.size(); ++d) {
    std::vector<uint32_t> ids = json_u32s(parser.parse(oracle[d]).value());
    ids.push_back(kEndOfText);
    for (size_t k = 0; k < ids.size(); ++k) stream.push_back({ids[k], d, k});
  }
  Packed p;
  for (size_t i = 0; i < stream.size(); i += kMaxLen)
    p.rows.emplace_back(stream.begin() + i,
                        stream.begin() + std::min<size_t>(i + kMaxLen, stream.size()));
  return p;
}

fs::path shardify_lm(const TempDir& tmp, const std::vector<std::string>& docs,
                     const std::string& name) {
  std::string jsonl;
  for (const auto& d : docs) jsonl += "{\"text\": \"" + d + "\"}\n";
  write_file(tmp.path() / (name + ".jsonl"), jsonl);
  const fs::path out = tmp.path() / name;
  shardify_ok("--input " + q(tmp.path() / (name + ".jsonl")) + " --task lm --max-len " +
              std::to_string(kMaxLen) + " --tokenizer " + q(gpt2_json()) + " --out " + q(out));
  return out;
}

std::vector<std::shared_ptr<loader::Batch>> all_batches(const fs::path& dir,
                                                        loader::LoaderOptions o) {
  loader::Loader l(dir, std::move(o));
  std::vector<std::shared_ptr<loader::Batch>> out;
  while (auto b = l.next()) out.push_back(b);
  return out;
}

loader::LoaderOptions in_order() {
  loader::LoaderOptions o;
  o.shuffle = false;
  o.batch_size = 3;
  o.threads = 2;
  o.rank = 0;
  o.world_size = 1;
  return o;
}

}  // namespace

TEST_CASE("packed lm: position_ids, cu_seqlens and the document mask follow the source documents") {
  TempDir tmp("docs-lm");
  const Packed want = expected_rows(tmp, kDocs);
  const fs::path ds = shardify_lm(tmp, kDocs, "lm");
  REQUIRE(Dataset::open(ds).info().task.packed);
  REQUIRE(Dataset::open(ds).info().task.separator_id == kEndOfText);

  loader::LoaderOptions o = in_order();
  o.documents.position_ids = true;
  o.documents.cu_seqlens = true;
  o.documents.attention_mask = true;
  const auto batches = all_batches(ds, o);
  size_t row = 0;
  for (const auto& b : batches) {
    const loader::Column& ids = b->at("input_ids");
    const loader::Column& pos = b->at("position_ids");
    const loader::Column& cu = b->at("cu_seqlens");
    const loader::Column& mask = b->at("attention_mask");
    const size_t t = static_cast<size_t>(ids.shape()[1]);
    REQUIRE(pos.shape() == ids.shape());
    REQUIRE(mask.shape() == std::vector<int64_t>{static_cast<int64_t>(b->size()), 1,
                                                 static_cast<int64_t>(t), static_cast<int64_t>(t)});
    REQUIRE(cu.dtype() == DType::kI32);
    std::vector<int64_t> want_cu{0};
    int64_t offset = 0, longest = 0;
    for (size_t i = 0; i < b->size(); ++i, ++row) {
      REQUIRE(row < want.rows.size());
      const auto& r = want.rows[row];
      REQUIRE(t >= r.size());
      // A document's tokens in this row: its offset less that of the row's first token of it.
      auto position = [&](size_t k) {
        size_t first = k;
        while (first > 0 && r[first - 1].doc == r[k].doc) --first;
        return r[k].offset - r[first].offset;
      };
      for (size_t k = 0; k < t; ++k) {
        const bool real = k < r.size();
        CHECK(ids.get(i * t + k) == (real ? int64_t{r[k].id} : 0));
        CHECK(pos.get(i * t + k) == (real ? static_cast<int64_t>(position(k)) : 0));
        for (size_t j = 0; j < t; ++j) {
          const bool real_j = j < r.size();
          const bool same = real && real_j ? r[k].doc == r[j].doc : real == real_j;
          CHECK_MESSAGE(mask.get(((i * t) + k) * t + j) == int64_t{j <= k && same},
                        "row " << row << " query " << k << " key " << j);
        }
        if (real && (k + 1 == r.size() || r[k + 1].doc != r[k].doc)) {
          want_cu.push_back(offset + static_cast<int64_t>(k) + 1);
          longest = std::max<int64_t>(longest, static_cast<int64_t>(position(k)) + 1);
        }
      }
      offset += static_cast<int64_t>(r.size());
    }
    std::vector<int64_t> got_cu(cu.elements());
    for (size_t k = 0; k < got_cu.size(); ++k) got_cu[k] = cu.get(k);
    CHECK(got_cu == want_cu);
    REQUIRE(b->at("max_seqlen").shape().empty());
    CHECK(b->at("max_seqlen").get(0) == longest);
  }
  CHECK(row == want.rows.size());
  CHECK(want.rows.size() >= 5);  // documents do span rows

  // Off by default: the [B, T] mask and no boundaries.
  const auto plain = all_batches(ds, in_order());
  REQUIRE(!plain.empty());
  CHECK(plain[0]->at("attention_mask").shape().size() == 2);
  CHECK(plain[0]->find("position_ids") == nullptr);
  CHECK(plain[0]->find("cu_seqlens") == nullptr);
}

TEST_CASE("the separator's text inside a document is the separator id: boundaries split there") {
  // shardify encodes like HF tokenizers, which match special tokens in raw text (SPEC.md
  // "Dataset info" states this limit of derived boundaries).
  TempDir tmp("docs-sep");
  const std::vector<std::string> docs = {"before<|endoftext|>after", "next"};
  const Packed want = expected_rows(tmp, docs);
  REQUIRE(want.rows.size() == 1);
  const auto& r = want.rows[0];
  const auto inner = std::find_if(r.begin(), r.end(), [&](const StreamToken& s) {
    return s.id == kEndOfText && s.doc == 0 && s.offset > 0 && s.offset + 1 < r.size();
  });
  REQUIRE_MESSAGE(inner != r.end(), "HF tokenizers no longer maps the text to the special id");
  loader::LoaderOptions o = in_order();
  o.documents.position_ids = true;
  const auto b = all_batches(shardify_lm(tmp, docs, "sep"), o);
  REQUIRE(b.size() == 1);
  const size_t after = static_cast<size_t>(inner - r.begin()) + 1;
  CHECK(b[0]->at("position_ids").get(after) == 0);  // not the document's position
  CHECK(r[after].offset == after);
}

TEST_CASE("document boundaries are refused without a separator, or for a mask too large") {
  TempDir tmp("docs-refused");
  write_fixture(tmp.path() / "plain");  // no task: nothing says how documents end
  loader::LoaderOptions o = in_order();
  o.documents.cu_seqlens = true;
  CHECK_THROWS_WITH_AS(loader::Loader(tmp.path() / "plain", o),
                       doctest::Contains("document boundaries need a packed dataset"),
                       const Error&);
  // An explicit separator makes any [L] ids field usable (a dataset packed by another program).
  o.documents.separator_id = 2;
  CHECK_NOTHROW(loader::Loader(tmp.path() / "plain", o));

  const fs::path ds = shardify_lm(tmp, kDocs, "lm");
  loader::LoaderOptions m = in_order();
  m.documents.attention_mask = true;
  m.documents.max_mask_length = kMaxLen - 1;
  CHECK_THROWS_WITH_AS(loader::Loader(ds, m), doctest::Contains("use cu_seqlens"), const Error&);
}

TEST_CASE("separator boundaries hold for every id width, row length and position dtype") {
  // The scan reads 16 ids at a time and copies positions in 64-byte chunks; rows of 67 and 16
  // tokens put documents across chunks, a tail after the last chunk, and the last document at
  // the column's end. The expected values are recomputed here, one token at a time.
  TempDir tmp("docs-widths");
  std::mt19937 rng(7);
  for (const DType stored : {DType::kU16, DType::kU32}) {
    for (const uint32_t seq : {67u, 16u}) {
      const uint32_t separator = stored == DType::kU16 ? 60000u : 100000u;
      const size_t rows = 600;
      std::vector<uint32_t> ids(rows * seq);
      for (size_t k = 0; k < ids.size(); ++k) {
        // Documents of 1 to ~40 tokens, a run without separators, and separators back to back.
        const bool long_run = (k / seq) % 7 == 3;
        ids[k] = !long_run && rng() % 9 == 0 ? separator : 1000 + rng() % 3000;
      }
      const fs::path dir = tmp.path() / (std::string(dtype_name(stored)) + std::to_string(seq));
      {
        DatasetWriter w(dir, Schema({{"input_ids", stored, {seq}}}));
        std::vector<unsigned char> record(w.schema().record_size());
        for (size_t r = 0; r < rows; ++r) {
          for (uint32_t k = 0; k < seq; ++k) {
            const uint32_t id = ids[r * seq + k];
            if (stored == DType::kU16) {
              const uint16_t narrow = static_cast<uint16_t>(id);
              std::memcpy(record.data() + k * 2, &narrow, 2);
            } else {
              std::memcpy(record.data() + k * 4, &id, 4);
            }
          }
          w.append(record.data());
        }
        w.finish();
      }
      for (const loader::IntOutput out : {loader::IntOutput::kInt64, loader::IntOutput::kInt32}) {
        CAPTURE(dtype_name(stored));
        CAPTURE(seq);
        loader::LoaderOptions o = in_order();
        o.batch_size = 512;  // a position column past the pooled-buffer size
        o.int_output = out;
        o.documents.position_ids = true;
        o.documents.cu_seqlens = true;
        o.documents.separator_id = separator;
        size_t row = 0;
        for (const auto& b : all_batches(dir, o)) {
          const loader::Column& pos = b->at("position_ids");
          CHECK(pos.dtype() == (out == loader::IntOutput::kInt32 ? DType::kI32 : DType::kI64));
          std::vector<int64_t> want_cu{0};
          int64_t longest = 0;
          for (size_t i = 0; i < b->size(); ++i, ++row) {
            int64_t position = 0;
            for (uint32_t k = 0; k < seq; ++k) {
              const size_t at = i * seq + k;
              if (pos.get(at) != position)
                FAIL_CHECK("row " << row << " token " << k << ": position " << pos.get(at)
                                  << ", want " << position);
              ++position;
              if (ids[row * seq + k] == separator || k + 1 == seq) {
                want_cu.push_back(static_cast<int64_t>(at) + 1);
                longest = std::max(longest, position);
                position = 0;
              }
            }
          }
          const loader::Column& cu = b->at("cu_seqlens");
          std::vector<int64_t> got_cu(cu.elements());
          for (size_t k = 0; k < got_cu.size(); ++k) got_cu[k] = cu.get(k);
          CHECK(got_cu == want_cu);
          CHECK(b->at("max_seqlen").get(0) == longest);
        }
        CHECK(row == rows);
      }
    }
  }
}
