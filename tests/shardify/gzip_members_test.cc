// .gz inputs are inflated by ISA-L (lib/shardify/gzip_source.cc). The members here are written
// by zlib, an independent deflate, with every optional field of a gzip header (RFC 1952): the
// text read back must be the text written, and a member whose trailer disagrees with its data
// must be refused, whichever of its two checks (CRC-32, length) fails.
#include <doctest/doctest.h>

#include "core/error.h"
#include "gzip_writer.h"
#include "shardify/byte_source.h"
#include "test_util.h"

using namespace shardkit;
using namespace shardkit::shardify;
using namespace shardkit::testing;
namespace fs = std::filesystem;

namespace {

std::string read_gz(const fs::path& dir, const std::string& bytes) {
  write_file(dir / "in.gz", bytes);
  return read_all(dir / "in.gz");
}

}  // namespace

TEST_CASE("gzip headers with every optional field, and members of every size, read back exactly") {
  TempDir tmp("gzip-members");
  for (const uint8_t flags :
       {0, kFname, kFextra, kFcomment, kFhcrc, kFhcrc | kFextra | kFname | kFcomment}) {
    for (const size_t size :
         {size_t{0}, size_t{1}, size_t{65535}, size_t{65536}, size_t{3000001}}) {
      CAPTURE(flags);
      CAPTURE(size);
      const std::string text = random_text(size, static_cast<uint32_t>(size + flags));
      CHECK(read_gz(tmp.path(), member(text, flags)) == text);
    }
  }
  // Stored (level 0) and fastest members; many members, empty ones among them, as block-gzip
  // tools write them, their headers falling across the reader's 64 KiB reads.
  const std::string a = random_text(200000, 1), b = random_text(70000, 2);
  CHECK(read_gz(tmp.path(), member(a, 0, 0) + member(b, kFname, 1)) == a + b);
  std::string many, want;
  for (int i = 0; i < 300; ++i) {
    const std::string part = i % 7 == 3 ? "" : random_text(1000 + i * 37, 100 + i);
    many += member(part, i % 3 == 0 ? kFhcrc | kFname | kFcomment : i % 2 ? kFextra : 0);
    want += part;
  }
  CHECK(read_gz(tmp.path(), many) == want);
}

TEST_CASE(
    "a header with its own CRC and a long name: read across many reads, or refused past 1 MiB") {
  TempDir tmp("gzip-long-header");
  const std::string text = random_text(5000, 3);
  const std::string long_name(300000, 'n');  // over four of the reader's 64 KiB reads
  CHECK(read_gz(tmp.path(), member(text, kFhcrc | kFname, 6, long_name) + member(text, kFhcrc)) ==
        text + text);
  write_file(tmp / "huge.gz", member(text, kFhcrc | kFname, 6, std::string(1500000, 'n')));
  try {
    read_all(tmp / "huge.gz");
    FAIL("a header of 1.5 MB was read");
  } catch (const Error& e) {
    CHECK(e.code() == ErrorCode::kInput);
    CHECK(e.reason().find("longer than 1 MiB") != std::string::npos);
  }
}

TEST_CASE("a gzip member whose CRC-32 or length disagrees with its data is refused") {
  TempDir tmp("gzip-trailer");
  const std::string first = random_text(100000, 7), second = random_text(50000, 8);
  const std::string good = member(first, kFname) + member(second, 0);
  REQUIRE(read_gz(tmp.path(), good) == first + second);
  // The second member's trailer: CRC-32 at 8 bytes from the end, the length at 4.
  for (const size_t from_end : {size_t{8}, size_t{4}, size_t{1}}) {
    CAPTURE(from_end);
    std::string bad = good;
    bad[bad.size() - from_end] ^= 0x01;
    write_file(tmp / "bad.gz", bad);
    try {
      read_all(tmp / "bad.gz");
      FAIL("a damaged trailer was read as good");
    } catch (const Error& e) {
      CHECK(e.code() == ErrorCode::kInput);
      CHECK(e.file() == (tmp / "bad.gz").string());
      CHECK(std::string(e.reason()).find("corrupt gzip data") != std::string::npos);
      // The first member, whole, is all that is kept (ByteSource::open's check).
      CHECK(std::string(e.reason()).find("from byte " + std::to_string(first.size())) !=
            std::string::npos);
    }
  }
  // A header that claims a method other than deflate.
  std::string bad = good;
  bad[2] = 7;
  write_file(tmp / "method.gz", bad);
  CHECK_THROWS_AS(read_all(tmp / "method.gz"), Error);
}

TEST_CASE("zero bytes after the last member are padding, as gzip reads them; other bytes are not") {
  TempDir tmp("gzip-padding");
  const std::string text = random_text(100000, 9);
  // 70000 zeros: past the reader's 64 KiB reads. gzip -t, where installed, says each is whole.
  for (const size_t zeros : {size_t{1}, size_t{1024}, size_t{70000}}) {
    CAPTURE(zeros);
    const std::string padded = member(text, kFname) + std::string(zeros, '\0');
    CHECK(read_gz(tmp.path(), padded) == text);
    if (run_command("command -v gzip >/dev/null") == 0)
      CHECK(run_command("gzip -t '" + (tmp / "in.gz").string() + "'") == 0);
  }
  // Zeros, then bytes that start no member: damage, as before.
  write_file(tmp / "garbage.gz", member(text, 0) + std::string(10, '\0') + "not gzip");
  CHECK_THROWS_AS(read_all(tmp / "garbage.gz"), Error);
  write_file(tmp / "garbage2.gz", member(text, 0) + "not gzip");
  CHECK_THROWS_AS(read_all(tmp / "garbage2.gz"), Error);
}
