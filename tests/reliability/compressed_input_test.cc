// Damaged compressed corpora through `shardify` (issue 13): real .gz and .zst files, made by the
// gzip and zstd programs, truncated at several points and with flipped bytes. A damaged stream
// never kills the run without a position: the error names the file and the last complete line;
// under --on-error skip the records before it are kept, exactly, and the loss is counted and
// listed. Also: the summary counts decompressed text bytes, with the compressed size beside them.
#include <doctest/doctest.h>

#include "core/verify.h"
#include "shardify_fixture.h"

namespace shardkit::reliability {
namespace {

uint64_t summary_number(const std::string& out, const std::string& key) {
  const size_t at = out.find("\"" + key + "\":");
  REQUIRE_MESSAGE(at != std::string::npos, "no '" << key << "' in: " << out);
  return std::stoull(out.substr(at + key.size() + 3));
}

std::string jsonl_corpus(uint64_t lines, uint64_t seed) {
  const std::string text = corpus_lines(lines, seed);
  std::string out;
  for (size_t start = 0; start < text.size();) {
    const size_t nl = text.find('\n', start);
    out += "{\"text\": " + testing::json_string(text.substr(start, nl - start)) + "}\n";
    start = nl + 1;
  }
  return out;
}

// The first `lines` lines of `text`.
std::string first_lines(const std::string& text, uint64_t lines) {
  size_t end = 0;
  for (uint64_t i = 0; i < lines; ++i) end = text.find('\n', end) + 1;
  return text.substr(0, end);
}

// `tool` ("gzip" or "zstd") compresses `plain` into `packed`, as a user's corpus would be made.
void compress(const std::string& tool, const fs::path& plain, const fs::path& packed) {
  const std::string cmd = tool == "gzip" ? "gzip -c -6 " : "zstd -q -c -3 ";
  REQUIRE(testing::run_command(cmd + shell_quote(plain.string()) + " > " +
                               shell_quote(packed.string())) == 0);
}

// The line number in "FILE:N: ..." of the first mention of `file`; 0 for "FILE: ..." (no
// complete line).
uint64_t reported_line(const std::string& out, const std::string& file) {
  const size_t at = out.find(file + ":");
  REQUIRE_MESSAGE(at != std::string::npos, "no mention of " << file << " in: " << out);
  const char next = at + file.size() + 1 < out.size() ? out[at + file.size() + 1] : ' ';
  return next >= '0' && next <= '9' ? std::stoull(out.substr(at + file.size() + 1)) : 0;
}

struct Corpus {
  testing::TempDir tmp{"compressed-input"};
  fs::path vocab = write_vocab(tmp.path());
  std::string text = jsonl_corpus(6000, 13);
  uint64_t lines = 6000;

  std::string command(const fs::path& in, const fs::path& out, const std::string& policy,
                      int threads = 2) const {
    return "--task lm --max-len 32 --threads " + std::to_string(threads) +
           " --json --allow-empty --tokenizer " + shell_quote(vocab.string()) + " --on-error " +
           policy + " --out " + shell_quote(out.string()) + " --input " + shell_quote(in.string());
  }
  // The dataset of the first `k` lines, from a plain file.
  fs::path reference(uint64_t k) const {
    const fs::path plain = tmp / ("first-" + std::to_string(k) + ".jsonl");
    const fs::path ds = tmp / ("ref-" + std::to_string(k));
    if (!fs::exists(ds)) {
      testing::write_file(plain, first_lines(text, k));
      REQUIRE(run_shardify(command(plain, ds, "fail")) == 0);
    }
    return ds;
  }
};

// `in` converted at 1 and 2 threads, where compressed files are read ahead: under fail the same
// line of `damaged` named, under skip the same dataset. The skip runs' output, 1 thread first.
std::pair<std::string, std::string> skip_runs_at_1_and_2_threads(const Corpus& c,
                                                                 const fs::path& in,
                                                                 const std::string& damaged) {
  std::string one, two;
  CHECK(run_shardify(c.command(in, c.tmp / "f1", "fail", 1), &one) != 0);
  CHECK(run_shardify(c.command(in, c.tmp / "f2", "fail", 2), &two) != 0);
  CHECK(reported_line(one, damaged) == reported_line(two, damaged));
  REQUIRE(run_shardify(c.command(in, c.tmp / "s1", "skip", 1), &one) == 0);
  REQUIRE(run_shardify(c.command(in, c.tmp / "s2", "skip", 2), &two) == 0);
  CHECK(compare_datasets(c.tmp / "s1", c.tmp / "s2").empty());
  return {one, two};
}

TEST_CASE("truncated .gz and .zst: the last complete line named, the records before it kept") {
  Corpus c;
  const fs::path plain = c.tmp / "corpus.jsonl";
  testing::write_file(plain, c.text);
  for (const std::string tool : {"gzip", "zstd"}) {
    const fs::path packed = c.tmp / ("corpus.jsonl." + std::string(tool == "gzip" ? "gz" : "zst"));
    compress(tool, plain, packed);
    const std::string bytes = testing::read_file(packed);
    // Inside the header, early, in the middle, and a few bytes short of the end (the trailer).
    for (const size_t keep : {size_t{6}, bytes.size() / 7, bytes.size() / 2, bytes.size() - 3}) {
      INFO(tool, " kept ", keep, " of ", bytes.size(), " bytes");
      const fs::path cut =
          c.tmp / ("cut-" + std::to_string(keep) + "-" + packed.filename().string());
      testing::write_file(cut, bytes.substr(0, keep));
      const std::string file = cut.string();

      std::string out;
      const fs::path failed = c.tmp / "failed";
      CHECK(run_shardify(c.command(cut, failed, "fail"), &out) != 0);
      INFO("fail run: ", out);
      CHECK(out.find("truncated " + std::string(tool) + " stream") != std::string::npos);
      CHECK(!fs::exists(failed));
      const uint64_t fail_line = reported_line(out, file);

      const fs::path skipped = c.tmp / ("skip-" + std::to_string(keep) + tool);
      REQUIRE(run_shardify(c.command(cut, skipped, "skip"), &out) == 0);
      INFO("skip run: ", out);
      const uint64_t k = reported_line(out, file);
      CHECK(k == fail_line);
      // Text before a cut decodes exactly, checked or not: read once.
      CHECK(out.find("\"read_again_checked\":false") != std::string::npos);
      CHECK(summary_number(out, "skipped") == 1);
      CHECK(summary_number(out, "documents") == k);
      if (k > 0)
        CHECK(out.find("after line " + std::to_string(k) + " (the last complete line)") !=
              std::string::npos);
      else
        CHECK(out.find("no complete line could be read") != std::string::npos);
      // Nothing decodable is dropped: a cut inside the header leaves nothing, one in the middle
      // thousands of lines, one in the trailer (after all the data) every line.
      if (keep == 6) CHECK(k == 0);
      if (keep == bytes.size() / 2) CHECK(k > c.lines / 4);
      if (keep == bytes.size() - 3) CHECK(k == c.lines);
      CHECK(verify_dataset(skipped).ok());
      CHECK(compare_datasets(skipped, c.reference(k)).empty());
    }
  }
}

TEST_CASE("flipped bytes in .gz and .zst: the damaged member dropped whole, never a wrong record") {
  Corpus c;
  // Two members (frames), as `cat a.gz b.gz` makes: the first half of the lines in each.
  const uint64_t half = c.lines / 2;
  const fs::path first = c.tmp / "first.jsonl", second = c.tmp / "second.jsonl";
  testing::write_file(first, first_lines(c.text, half));
  testing::write_file(second, c.text.substr(first_lines(c.text, half).size()));
  for (const std::string tool : {"gzip", "zstd"}) {
    const std::string ext = tool == "gzip" ? "gz" : "zst";
    compress(tool, first, c.tmp / ("first." + ext));
    compress(tool, second, c.tmp / ("second." + ext));
    const std::string a = testing::read_file(c.tmp / ("first." + ext));
    const std::string bytes = a + testing::read_file(c.tmp / ("second." + ext));
    {  // Undamaged, the two members are read once, unchecked, and every line kept.
      const fs::path whole = c.tmp / ("whole.jsonl." + ext);
      testing::write_file(whole, bytes);
      std::string out;
      REQUIRE(run_shardify(c.command(whole, c.tmp / ("skip-whole-" + tool), "skip"), &out) == 0);
      CHECK(out.find("\"read_again_checked\":false") != std::string::npos);
      CHECK(summary_number(out, "documents") == c.lines);
    }
    // In each member's data at a quarter, half and three quarters, and in each one's checksum
    // (gzip's CRC-32 is the trailer's first 4 of 8 bytes, zstd's XXH64 part the last 4).
    const size_t sum = tool == "gzip" ? 8 : 2;
    std::vector<size_t> flips;
    for (const size_t base : {size_t{0}, a.size()}) {
      const size_t size = base == 0 ? a.size() : bytes.size() - a.size();
      for (const size_t at : {size / 4, size / 2, 3 * size / 4, size - sum})
        flips.push_back(base + at);
    }
    for (const size_t at : flips) {
      const bool in_second = at >= a.size();
      INFO(tool, " flipped byte ", at, " of ", bytes.size(), in_second ? " (second member)" : "");
      std::string bad = bytes;
      bad[at] = static_cast<char>(bad[at] ^ 0x5A);
      const fs::path flipped = c.tmp / ("flip-" + std::to_string(at) + ".jsonl." + ext);
      testing::write_file(flipped, bad);
      const std::string file = flipped.string();
      // The lines of the members before the damaged one are kept; none of the damaged one.
      const uint64_t expected = in_second ? half : 0;

      std::string out;
      const fs::path failed = c.tmp / "failed";
      const int rc = run_shardify(c.command(flipped, failed, "fail"), &out);
      INFO("fail run: ", out);
      CHECK(rc == 1);  // an error exit, not a signal
      CHECK(!fs::exists(failed));
      CHECK(out.find("corrupt " + tool + " data near compressed byte") != std::string::npos);
      CHECK(reported_line(out, file) == expected);

      const fs::path skipped = c.tmp / ("skip-flip-" + std::to_string(at) + tool);
      REQUIRE(run_shardify(c.command(flipped, skipped, "skip"), &out) == 0);
      INFO("skip run: ", out);
      CHECK(reported_line(out, file) == expected);
      CHECK(summary_number(out, "skipped") == 1);
      CHECK(summary_number(out, "documents") == expected);
      CHECK(out.find(std::string("nothing of its ") + (tool == "gzip" ? "member" : "frame")) !=
            std::string::npos);
      // Read unchecked first, the damaged member's text reached the workers: read again, checked.
      CHECK(out.find("\"read_again_checked\":true") != std::string::npos);
      CHECK(verify_dataset(skipped).ok());
      if (expected > 0) CHECK(compare_datasets(skipped, c.reference(expected)).empty());
    }
  }
}

TEST_CASE("a damaged member's labels never count: the label pass reads the file again, checked") {
  Corpus c;
  // Member one holds labels neg and pos, member two only odd; member two's CRC is flipped, so
  // all its text decodes (and is read unchecked) before the damage shows.
  std::string first, second;
  for (int i = 0; i < 300; ++i) {
    first += "{\"text\": \"the cat sat " + std::to_string(i) + "\", \"label\": \"" +
             (i % 2 ? "pos" : "neg") + "\"}\n";
    second += "{\"text\": \"a dog ran " + std::to_string(i) + "\", \"label\": \"odd\"}\n";
  }
  testing::write_file(c.tmp / "one.jsonl", first);
  testing::write_file(c.tmp / "two.jsonl", second);
  for (const std::string tool : {"gzip", "zstd"}) {
    const std::string ext = tool == "gzip" ? "gz" : "zst";
    compress(tool, c.tmp / "one.jsonl", c.tmp / ("one.jsonl." + ext));
    compress(tool, c.tmp / "two.jsonl", c.tmp / ("two.jsonl." + ext));
    const std::string whole = testing::read_file(c.tmp / ("one.jsonl." + ext)) +
                              testing::read_file(c.tmp / ("two.jsonl." + ext));
    std::string damaged = whole;
    const size_t sum = tool == "gzip" ? 8 : 2;  // into the second member's checksum
    damaged[damaged.size() - sum] = static_cast<char>(damaged[damaged.size() - sum] ^ 0x5A);
    const auto labels_of = [&](const std::string& bytes, const std::string& name, bool again) {
      const fs::path in = c.tmp / (name + ".jsonl." + ext), out = c.tmp / (name + "-cls-" + ext);
      testing::write_file(in, bytes);
      std::string log;
      REQUIRE(run_shardify("--task cls --label-field label --max-len 16 --threads 2 --json "
                           "--on-error skip --tokenizer " +
                               shell_quote(c.vocab.string()) + " --out " +
                               shell_quote(out.string()) + " --input " + shell_quote(in.string()),
                           &log) == 0);
      INFO(tool, " ", name, ": ", log);
      CHECK(log.find(std::string("\"read_again_checked\":") + (again ? "true" : "false")) !=
            std::string::npos);
      return Dataset::open(out).info().labels.names;
    };
    CHECK(labels_of(whole, "labelled", false) == std::vector<std::string>{"neg", "odd", "pos"});
    CHECK(labels_of(damaged, "labelled-damaged", true) == std::vector<std::string>{"neg", "pos"});
  }
}

// Under --on-error fail a compressed file is decoded once and checked as it is read, so a damaged
// member's text can reach the workers before the damage is found; the error must still be the
// damage, at the line a checked read stops at (as under skip), in every line-based format.
TEST_CASE("damage read unchecked under --on-error fail: named as a checked read names it") {
  Corpus c;
  const uint64_t half = c.lines / 2;
  const std::string text = corpus_lines(c.lines, 29);
  std::string csv = "text\n";
  for (size_t start = 0; start < text.size();) {
    const size_t nl = text.find('\n', start);
    csv += testing::json_string(text.substr(start, nl - start)) + "\n";  // a quoted field
    start = nl + 1;
  }
  struct Format {
    std::string name, flags, body;
    uint64_t first_member_lines;
  };
  const std::vector<Format> formats = {
      {"txt", "--format text --doc-sep line", text, half},
      {"txt", "--format text --doc-sep file", text, half},
      {"csv", "--format csv --text-field text", csv, half + 1}};  // its header is line 1
  for (const Format& f : formats) {
    for (const std::string tool : {"gzip", "zstd"}) {
      INFO(f.flags, " ", tool);
      const std::string ext = tool == "gzip" ? "gz" : "zst";
      const std::string first = first_lines(f.body, f.first_member_lines);
      testing::write_file(c.tmp / "first", first);
      testing::write_file(c.tmp / "second", f.body.substr(first.size()));
      compress(tool, c.tmp / "first", c.tmp / ("first." + ext));
      compress(tool, c.tmp / "second", c.tmp / ("second." + ext));
      const std::string a = testing::read_file(c.tmp / ("first." + ext));
      std::string bad = a + testing::read_file(c.tmp / ("second." + ext));
      bad[a.size() + (bad.size() - a.size()) / 2] ^= 0x5A;  // the middle of the second member
      const fs::path file = c.tmp / ("damaged." + f.name + "." + ext);
      testing::write_file(file, bad);

      std::string failed, skipped;
      const int failed_rc =
          run_shardify(f.flags + " " + c.command(file, c.tmp / "fail-ds", "fail"), &failed);
      const fs::path skip_ds = c.tmp / ("skip-" + tool + f.name);
      fs::remove_all(skip_ds);
      const int skipped_rc =
          run_shardify(f.flags + " " + c.command(file, skip_ds, "skip"), &skipped);
      INFO("fail run: ", failed);
      INFO("skip run: ", skipped);
      CHECK(failed_rc == 1);
      CHECK(!fs::exists(c.tmp / "fail-ds"));
      CHECK(skipped_rc == 0);
      CHECK(failed.find("corrupt " + tool + " data near compressed byte") != std::string::npos);
      CHECK(reported_line(failed, file.string()) == f.first_member_lines);
      CHECK(reported_line(skipped, file.string()) == f.first_member_lines);
    }
  }
}

TEST_CASE("a damaged magic number: refused by name, not read as binary text") {
  Corpus c;
  const fs::path plain = c.tmp / "corpus.jsonl";
  testing::write_file(plain, c.text);
  for (const std::string tool : {"gzip", "zstd"}) {
    const std::string ext = tool == "gzip" ? "gz" : "zst";
    compress(tool, plain, c.tmp / ("corpus.jsonl." + ext));
    std::string bytes = testing::read_file(c.tmp / ("corpus.jsonl." + ext));
    bytes[0] ^= 0x01;  // gzip's 1f becomes 1e; zstd's 28 becomes 29
    const fs::path damaged = c.tmp / ("damaged.jsonl." + ext);
    testing::write_file(damaged, bytes);
    std::string out;
    CHECK(run_shardify(c.command(damaged, c.tmp / "failed", "fail"), &out) != 0);
    INFO(tool, ": ", out);
    CHECK(out.find(damaged.string() + ": named like a " + tool +
                   " file, but it does not start with " + tool + "'s magic number") !=
          std::string::npos);
    CHECK(!fs::exists(c.tmp / "failed"));
    // Under skip, the file is one error and the good file beside it converts whole.
    const fs::path both = c.tmp / ("both-" + ext);
    fs::create_directories(both);
    fs::copy_file(damaged, both / damaged.filename());
    fs::copy_file(plain, both / "good.jsonl");
    const fs::path skipped = c.tmp / ("skipped-" + ext);
    REQUIRE(run_shardify(c.command(both, skipped, "skip"), &out) == 0);
    CHECK(summary_number(out, "skipped") == 1);
    CHECK(summary_number(out, "documents") == c.lines);
  }
  // A text file that is merely named .gz still reads as the text it is.
  const fs::path misnamed = c.tmp / "misnamed.jsonl.gz";
  fs::copy_file(plain, misnamed);
  std::string out;
  REQUIRE(run_shardify(c.command(misnamed, c.tmp / "misnamed", "fail"), &out) == 0);
  CHECK(compare_datasets(c.tmp / "misnamed", c.reference(c.lines)).empty());
}

TEST_CASE("a large damaged .gz decoded ahead (2 threads) reads as decoded in the read stage") {
  // From 1 MiB on, a compressed file is decoded on its own thread when others tokenize
  // (lib/shardify/read_ahead_source.h); at 1 thread it is not. Both must keep and name the same.
  Corpus c;
  // Five members, as `cat a.gz b.gz ...` makes; the third one damaged.
  const std::string text = jsonl_corpus(120000, 29);
  std::string bytes;
  size_t third = 0;
  for (int m = 0; m < 5; ++m) {
    const fs::path part = c.tmp / ("part" + std::to_string(m) + ".jsonl");
    testing::write_file(
        part, first_lines(text, 24000 * (m + 1)).substr(first_lines(text, 24000 * m).size()));
    compress("gzip", part, c.tmp / "part.gz");
    if (m == 2) third = bytes.size() + testing::read_file(c.tmp / "part.gz").size() / 2;
    bytes += testing::read_file(c.tmp / "part.gz");
  }
  REQUIRE(bytes.size() > (size_t{3} << 20) / 2);
  bytes[third] ^= 0x10;
  const fs::path damaged = c.tmp / "damaged.jsonl.gz";
  testing::write_file(damaged, bytes);
  const auto [one, two] = skip_runs_at_1_and_2_threads(c, damaged, damaged.string());
  const uint64_t k = reported_line(one, damaged.string());
  CHECK(k == reported_line(two, damaged.string()));
  CHECK(k == 48000);  // the two members before the damaged one
  CHECK(summary_number(one, "documents") == summary_number(two, "documents"));
}

TEST_CASE("large .gz files opened ahead (2 threads), one damaged: as opened in turn (1 thread)") {
  // The next compressed file of 1 MiB or more is opened, and under skip checked, while the one
  // before it is read (lib/shardify/example_batcher.h). What is kept and named must not change.
  Corpus c;
  const fs::path dir = c.tmp / "three";
  fs::create_directories(dir);
  for (const char* name : {"a", "b", "c"}) {
    const fs::path plain = c.tmp / (std::string(name) + ".jsonl");
    testing::write_file(plain, jsonl_corpus(60000, name[0]));
    compress("gzip", plain, dir / (std::string(name) + ".jsonl.gz"));
  }
  std::string b = testing::read_file(dir / "b.jsonl.gz");
  REQUIRE(b.size() > (size_t{1} << 20));
  b[b.size() / 3] ^= 0x10;
  testing::write_file(dir / "b.jsonl.gz", b);
  const auto [one, two] = skip_runs_at_1_and_2_threads(c, dir, (dir / "b.jsonl.gz").string());
  CHECK(summary_number(one, "skipped") == 1);
  CHECK(summary_number(two, "skipped") == 1);
  CHECK(summary_number(one, "documents") == 120000);  // a and c whole, nothing of b's member
  CHECK(summary_number(two, "documents") == 120000);
}

TEST_CASE("the summary counts decompressed text bytes, the compressed size beside them") {
  Corpus c;
  const fs::path plain = c.tmp / "corpus.jsonl";
  testing::write_file(plain, c.text);
  for (const std::string tool : {"gzip", "zstd"}) {
    const fs::path packed = c.tmp / ("corpus.jsonl." + std::string(tool == "gzip" ? "gz" : "zst"));
    compress(tool, plain, packed);
    INFO(tool);
    std::string out;
    REQUIRE(run_shardify(c.command(packed, c.tmp / ("ds-" + tool), "fail"), &out) == 0);
    INFO(out);
    CHECK(summary_number(out, "bytes_in") == c.text.size());
    CHECK(summary_number(out, "bytes_in_compressed") == fs::file_size(packed));
    const uint64_t bytes_out = summary_number(out, "bytes_out");
    const size_t ratio_at = out.find("\"ratio\":");
    REQUIRE(ratio_at != std::string::npos);
    CHECK(std::stod(out.substr(ratio_at + 8)) ==
          doctest::Approx(double(c.text.size()) / double(bytes_out)));
    // The text summary shows both.
    std::string args = c.command(packed, c.tmp / ("text-" + tool), "fail");
    args.replace(args.find(" --json"), 7, "");
    REQUIRE(run_shardify(args, &out) == 0);
    CHECK(out.find("bytes in   " + std::to_string(c.text.size()) + " (" +
                   std::to_string(fs::file_size(packed)) + " compressed on disk)") !=
          std::string::npos);
  }
  // Plain input: the two agree and the text summary shows one number.
  std::string out;
  REQUIRE(run_shardify(c.command(plain, c.tmp / "ds-plain", "fail"), &out) == 0);
  CHECK(summary_number(out, "bytes_in") == c.text.size());
  CHECK(summary_number(out, "bytes_in_compressed") == c.text.size());
}

}  // namespace
}  // namespace shardkit::reliability
