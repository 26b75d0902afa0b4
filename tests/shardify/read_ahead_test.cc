// A compressed input decoded ahead on its own thread (lib/shardify/read_ahead_source.h) must
// read exactly as the decoder read directly: the same bytes, then the same error at the same
// point, whatever sizes the reader asks for. The gzip members are written by zlib.
#include <doctest/doctest.h>

#include <random>

#include "core/error.h"
#include "gzip_writer.h"
#include "shardify/byte_source.h"
#include "shardify/read_ahead_source.h"
#include "test_util.h"

using namespace shardkit;
using namespace shardkit::shardify;
using namespace shardkit::testing;
namespace fs = std::filesystem;

namespace {

struct Outcome {
  std::string text;
  std::string error;  // empty: read to the end
};

// Reads `source` to its end or first error, asking for sizes drawn from `seed`.
Outcome read_through(ByteSource& source, uint32_t seed) {
  std::mt19937 rng(seed);
  const size_t sizes[] = {1, 7, 4096, 65536, 1 << 20, 3 << 20};
  Outcome o;
  std::string buf(3 << 20, '\0');
  try {
    for (;;) {
      const size_t n = source.read(buf.data(), sizes[rng() % 6]);
      if (n == 0) break;
      o.text.append(buf.data(), n);
    }
  } catch (const Error& e) {
    o.error = e.what();
  }
  return o;
}

void check_same(const fs::path& file, ByteSource::Check check) {
  CAPTURE(file.filename().string());
  auto direct = ByteSource::open(file, check);
  const Outcome want = read_through(*direct, 1);
  for (uint32_t seed : {2u, 3u, 4u}) {
    auto ahead = read_ahead(ByteSource::open(file, check));
    const Outcome got = read_through(*ahead, seed);
    CHECK(got.text.size() == want.text.size());
    CHECK(got.text == want.text);
    CHECK(got.error == want.error);
  }
}

}  // namespace

TEST_CASE("decoded ahead, a compressed file reads as decoded directly, errors included") {
  TempDir tmp("read-ahead");
  std::string members, text;
  std::vector<size_t> ends, text_ends;  // where each member ends, in the file and in the text
  for (int i = 0; i < 12; ++i) {
    const std::string part = random_text(i == 5 ? 0 : 150000 + 310000 * (i % 4), 10 + i);
    members += member(part, i % 3 == 0 ? kFname : 0);
    text += part;
    ends.push_back(members.size());
    text_ends.push_back(text.size());
  }
  write_file(tmp / "good.gz", members);
  std::string damaged = members;
  damaged[ends[6] - 6] ^= 0x40;  // member 6's CRC-32 (the trailer's first four bytes)
  write_file(tmp / "damaged.gz", damaged);
  write_file(tmp / "cut.gz", members.substr(0, ends[8] - 1000));
  for (const auto check : {ByteSource::Check::kWhileReading, ByteSource::Check::kBeforeUse}) {
    CAPTURE(static_cast<int>(check));
    check_same(tmp / "good.gz", check);
    check_same(tmp / "damaged.gz", check);
    check_same(tmp / "cut.gz", check);
  }
  // What zlib wrote comes back whole; the damaged file's text before its error is a prefix.
  auto ahead = read_ahead(ByteSource::open(tmp / "good.gz", ByteSource::Check::kWhileReading));
  CHECK(read_through(*ahead, 5).text == text);
  ahead = read_ahead(ByteSource::open(tmp / "damaged.gz", ByteSource::Check::kWhileReading));
  const Outcome broken = read_through(*ahead, 6);
  CHECK(broken.error.find("corrupt gzip data") != std::string::npos);
  CHECK(text.compare(0, broken.text.size(), broken.text) == 0);
  CHECK(broken.text.size() >= text_ends[5]);  // every member before the damaged one
}

TEST_CASE("a source decoded ahead and dropped part way stops its thread") {
  TempDir tmp("read-ahead-drop");
  std::string members;
  for (int i = 0; i < 8; ++i) members += member(random_text(1 << 20, 40 + i), 0);
  write_file(tmp / "big.gz", members);
  for (size_t first : {size_t{0}, size_t{1}, size_t{3} << 20}) {
    auto ahead = read_ahead(ByteSource::open(tmp / "big.gz", ByteSource::Check::kWhileReading));
    std::string buf(first + 1, '\0');
    size_t got = 0;
    while (got < first) got += ahead->read(buf.data() + got, first - got);
    ahead.reset();  // joins the decoding thread, which may be waiting or decoding
    CHECK(got == first);
  }
}
