// Inputs read by mapping them (core/mapped_file.h): a whole-file document, text lines and JSONL
// lines convert to the same bytes mapped as read; a file another program shortens meanwhile is
// an error naming it, never a SIGBUS or a dataset built from the zeros that replaced its lost
// pages; and the pages behind the reader leave resident memory. The files are truncated and the
// signals raised for real.
//
// The guard is process-wide and cannot be removed: the first two tests run before it is installed
// here (and check that it was not), so the tests run in file order (doctest's default).
#include <doctest/doctest.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <sstream>

#include "core/error.h"
#include "core/mapped_file.h"
#include "shardify/byte_source.h"
#include "shardify/convert.h"
#include "shardify/line_reader.h"
#include "shardify_fixture.h"

namespace shardkit::reliability {
namespace {

constexpr size_t kPadding = 64;

// A file of `bytes` bytes of fixture text, many lines, so that it is one long document.
fs::path write_document(const fs::path& path, size_t bytes) {
  std::string text;
  for (uint64_t seed = 1; text.size() < bytes; ++seed) text += corpus_lines(1000, seed);
  text.resize(bytes);
  text.back() = '\n';
  testing::write_file(path, text);
  return path;
}

std::shared_ptr<const MappedFile> map_file(const fs::path& path, size_t padding) {
  const int fd = ::open(path.c_str(), O_RDONLY);
  REQUIRE(fd >= 0);
  auto mapped = MappedFile::map(fd, fs::file_size(path), padding, path.string());
  ::close(fd);  // a mapping outlives its descriptor
  return mapped;
}

// The same fixture lines as JSONL rows: {"text": LINE}.
fs::path write_jsonl(const fs::path& path, size_t bytes) {
  std::string rows;
  for (uint64_t seed = 1; rows.size() < bytes; ++seed) {
    const std::string lines = corpus_lines(1000, seed);
    for (size_t at = 0; at < lines.size();) {
      const size_t nl = lines.find('\n', at);
      rows += "{\"text\": \"" + lines.substr(at, nl - at) + "\"}\n";
      at = nl + 1;
    }
  }
  testing::write_file(path, rows);
  return path;
}

shardify::ConvertOptions document_options(const fs::path& input, const fs::path& vocab,
                                          const fs::path& out) {
  shardify::ConvertOptions o;
  o.inputs = {input.string()};
  o.format = shardify::InputFormat::kText;
  o.doc_separator = shardify::DocSeparator::kFile;
  o.task.task = shardify::Task::kLm;
  o.task.max_len = 128;
  o.tokenizer_path = vocab.string();
  o.out = out.string();
  o.threads = 1;
  return o;
}

// One document per line, on two threads (JSONL lines are then parsed by the tokenizing threads).
shardify::ConvertOptions line_options(const fs::path& input, const fs::path& vocab,
                                      const fs::path& out) {
  shardify::ConvertOptions o = document_options(input, vocab, out);
  if (input.extension() == ".jsonl")
    o.format = shardify::InputFormat::kJsonl;  // its rows are lines already
  else
    o.doc_separator = shardify::DocSeparator::kLine;
  o.threads = 2;
  return o;
}

void check_same_datasets(const fs::path& a, const fs::path& b) {
  REQUIRE(testing::sorted_names(a) == testing::sorted_names(b));
  for (const std::string& name : testing::sorted_names(a)) {
    INFO(name);
    CHECK(testing::read_file(a / name) == testing::read_file(b / name));
  }
}

// The resident bytes of the mapping that holds `address`, from /proc/self/smaps.
uint64_t resident_bytes_of_mapping(const void* address) {
  std::istringstream smaps(testing::read_file("/proc/self/smaps"));
  const auto at = reinterpret_cast<uintptr_t>(address);
  bool inside = false;
  for (std::string line; std::getline(smaps, line);) {
    uintptr_t begin = 0, end = 0;
    if (std::sscanf(line.c_str(), "%lx-%lx ", &begin, &end) == 2) {
      inside = begin <= at && at < end;
    } else if (inside && line.rfind("Rss:", 0) == 0) {
      return std::stoull(line.substr(4)) * 1024;  // kB
    }
  }
  FAIL("no mapping holds the address");
  return 0;
}

// Exit status of a child running `f`: how a process with the guard meets a fault.
int status_of_child(const std::function<void()>& f) {
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    f();
    ::_exit(0);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

// A page of a file truncated under a plain mapping of it, outside every MappedFile.
void read_lost_page(const fs::path& path) {
  if (!std::freopen("/dev/null", "w", stderr)) ::_exit(4);  // a sanitizer's report of the fault
  const int fd = ::open(path.c_str(), O_RDWR);
  auto* p = static_cast<volatile char*>(::mmap(nullptr, 3 * 4096, PROT_READ, MAP_SHARED, fd, 0));
  if (::ftruncate(fd, 0) != 0) ::_exit(3);
  (void)p[2 * 4096];  // SIGBUS
}

}  // namespace

TEST_CASE("a SIGBUS outside every mapping goes to the handler before, or ends the process") {
  testing::TempDir tmp("mapped-other");
  testing::write_file(tmp / "a", std::string(3 * 4096, 'x'));
  testing::write_file(tmp / "b", std::string(3 * 4096, 'x'));
  REQUIRE_MESSAGE(!map_file(tmp / "a", kPadding), "the guard was installed before this test");
  // Each child installs the guard afresh (this process has not): after nothing, and after a
  // handler of the program's own.
  const int plain = status_of_child([&] {
    guard_mapped_files();
    read_lost_page(tmp / "a");
  });
#if defined(__SANITIZE_ADDRESS__)
  // AddressSanitizer's SIGBUS handler came before the guard: it reports the fault and exits.
  CHECK(!(WIFEXITED(plain) && WEXITSTATUS(plain) == 0));
#else
  CHECK(WIFSIGNALED(plain));
  CHECK(WTERMSIG(plain) == SIGBUS);
#endif
  const int chained = status_of_child([&] {
    struct sigaction before {};
    before.sa_sigaction = [](int, siginfo_t*, void*) { ::_exit(42); };
    before.sa_flags = SA_SIGINFO;
    ::sigaction(SIGBUS, &before, nullptr);
    guard_mapped_files();
    read_lost_page(tmp / "b");
  });
  CHECK(WIFEXITED(chained));
  CHECK(WEXITSTATUS(chained) == 42);
}

TEST_CASE(
    "a document, lines and JSONL lines convert to the same bytes read (unguarded) and mapped, "
    "at 1 and 2 threads") {
  testing::TempDir tmp("mapped-same");
  const fs::path vocab = write_vocab(tmp.path());
  const fs::path doc = write_document(tmp / "doc.txt", 3u << 20);
  const fs::path rows = write_jsonl(tmp / "rows.jsonl", 3u << 20);
  REQUIRE_MESSAGE(!map_file(doc, kPadding), "the guard was installed before this test");
  shardify::convert(document_options(doc, vocab, tmp / "read"));
  shardify::convert(line_options(doc, vocab, tmp / "read-lines"));
  shardify::convert(line_options(rows, vocab, tmp / "read-rows"));

  guard_mapped_files();
  {
    shardify::LineReader lines(shardify::ByteSource::open(doc));
    std::string_view first;
    REQUIRE(lines.next(first));
    shardify::LineReader::Rest rest = lines.take_rest();
    REQUIRE(rest.file != nullptr);
    CHECK(rest.buffer == nullptr);
    CHECK(rest.text == testing::read_file(doc));
    CHECK(rest.text.data() == rest.file->bytes().data());
    // The mapping goes with the document, not with the reader, which the converter keeps until
    // its next call finds the end (on one thread, after the document's records were made).
    const std::weak_ptr<const MappedFile> mapping = rest.file;
    rest.file.reset();
    CHECK(mapping.expired());
  }
  {
    shardify::LineReader lines(shardify::ByteSource::open(rows));
    std::string_view first;
    REQUIRE(lines.next(first));
    REQUIRE(lines.line_file() != nullptr);
    CHECK(lines.line_owner() == nullptr);
    CHECK(first.data() == lines.line_file()->bytes().data());  // a view, not a copy
  }
  shardify::convert(document_options(doc, vocab, tmp / "mapped"));
  shardify::convert(line_options(doc, vocab, tmp / "mapped-lines"));
  shardify::convert(line_options(rows, vocab, tmp / "mapped-rows"));
  shardify::ConvertOptions one_thread = line_options(rows, vocab, tmp / "mapped-rows-1");
  one_thread.threads = 1;
  shardify::convert(one_thread);
  check_same_datasets(tmp / "read", tmp / "mapped");
  check_same_datasets(tmp / "read-lines", tmp / "mapped-lines");
  check_same_datasets(tmp / "read-rows", tmp / "mapped-rows");
  check_same_datasets(tmp / "mapped-rows-1", tmp / "mapped-rows");
}

TEST_CASE("a mapped file's pages behind the line being read leave resident memory") {
  guard_mapped_files();
  testing::TempDir tmp("mapped-resident");
  const fs::path doc = write_document(tmp / "doc.txt", 96u << 20);
  shardify::LineReader lines(shardify::ByteSource::open(doc));
  std::string_view line;
  REQUIRE(lines.next(line));
  const std::shared_ptr<const MappedFile> mapping = lines.line_file();  // kept after the last line
  const char* data = mapping->bytes().data();
  uint64_t most = 0;
  size_t count = 1;
  while (lines.next(line))
    if (++count % 4096 == 0) most = std::max(most, resident_bytes_of_mapping(data));
  MESSAGE("at most ", most >> 20, " MiB of the 96 MiB file resident while its lines were read");
  CHECK(most > 0);
  CHECK(most <= (40u << 20));  // 16 MiB behind, released 16 MiB at a time, and readahead
}

TEST_CASE("a mapped file: its bytes, then zeros; a page lost to truncation reads as zeros") {
  guard_mapped_files();
  testing::TempDir tmp("mapped-file");
  // The last page holds the file's end and the padding spills into a page of its own.
  const size_t size = 3 * 4096 + 4096 - 10;
  std::string bytes(size, '\0');
  for (size_t i = 0; i < size; ++i) bytes[i] = static_cast<char>('a' + i % 26);
  testing::write_file(tmp / "f", bytes);
  testing::write_file(tmp / "g", bytes);
  const auto f = map_file(tmp / "f", kPadding), g = map_file(tmp / "g", kPadding);
  REQUIRE(f);
  REQUIRE(g);
  CHECK(f->bytes() == bytes);
  for (size_t i = 0; i < kPadding; ++i) REQUIRE(f->bytes().data()[size + i] == '\0');
  CHECK(!f->shrank());
  f->check_intact();

  fs::resize_file(tmp / "f", 4096 + 10);
  const volatile char* p = f->bytes().data();
  CHECK(p[2 * 4096 + 5] == '\0');  // faults, and the handler maps zeros in
  CHECK(p[3 * 4096] == '\0');
  CHECK(p[5] == bytes[5]);  // the pages before the lost one are the file's
  CHECK(f->shrank());
  try {
    f->check_intact();
    FAIL("a shrunk file passed");
  } catch (const Error& e) {
    CHECK(e.code() == ErrorCode::kIo);
    CHECK(std::string(e.what()).find((tmp / "f").string()) != std::string::npos);
    CHECK(std::string(e.what()).find("shrank") != std::string::npos);
  }
  CHECK(!g->shrank());  // the other mapping is untouched
  CHECK(g->bytes() == bytes);
}

TEST_CASE("an input that shrinks during a conversion fails naming it, and nothing is published") {
  guard_mapped_files();
  testing::TempDir tmp("mapped-shrink");
  const fs::path vocab = write_vocab(tmp.path());
  fs::create_directory(tmp / "out");
  using Options = shardify::ConvertOptions (*)(const fs::path&, const fs::path&, const fs::path&);
  const std::vector<std::pair<std::string, Options>> cases = {
      {"doc.txt", document_options}, {"lines.txt", line_options}, {"rows.jsonl", line_options}};
  for (const auto& [name, options] : cases) {
    INFO(name);
    // A document of 32 parts of 256 KiB, or lines in batches of 256 KiB.
    const fs::path input = name == "rows.jsonl" ? write_jsonl(tmp / name, 8u << 20)
                                                : write_document(tmp / name, 8u << 20);
    bool truncated = false;
    try {
      shardify::convert(options(input, vocab, tmp / "out" / "ds"),
                        [&](const shardify::ConvertProgress&) {
                          if (!truncated) fs::resize_file(input, 4096);  // after the first batch
                          truncated = true;
                        });
      FAIL("the conversion of a file that shrank under it succeeded");
    } catch (const Error& e) {
      CHECK(e.code() == ErrorCode::kIo);
      CHECK(std::string(e.what()).find(input.string()) != std::string::npos);
      CHECK(std::string(e.what()).find("shrank") != std::string::npos);
    }
    CHECK(truncated);
    // No dataset, no staging directory left behind.
    CHECK(testing::sorted_names(tmp / "out").empty());
  }
}

}  // namespace shardkit::reliability
