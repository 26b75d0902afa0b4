// shardify end to end: conversion MB/s at 1 and 2 threads beside tokenizer-only speed on the
// same text, and bytes per real token on disk beside a Megatron-style uint16 .bin/.idx and
// torch.save of int64 tensors (Debian's python3-torch via tests/bench/torch_save_baseline.py);
// input formats, a --part/merge round trip and (given a chat template) sft rows.
//
//   build/tests/bench/bench_shardify [--speed-only] [--document FILE] TOKENIZER TEXT_FILE
//                                    [max_len=512] [runs=3] [tokenizer_config.json]
//
// TEXT_FILE holds one document per line (e.g. a decompressed corpus from the shared data). The
// one-document rows convert FILE (default TEXT_FILE) as a single document (--doc-sep file), whose
// parts several threads tokenize; the many-files rows, its first 12 MB as files of about 4 KB.
// --speed-only stops after the throughput rows.
#include <unistd.h>
#include <zstd.h>

#include <time.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "core/dataset.h"
#include "core/dataset_writer.h"
#include "core/mapped_file.h"
#include "input_formats_bench.h"
#include "merge_bench.h"
#include "sft_bench.h"
#include "shardify/byte_source.h"
#include "shardify/convert.h"
#include "tokenizer/tokenizer.h"

using namespace shardkit;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

// CPU seconds of the whole process: on a shared machine, CPU per MB shows the converter's
// overhead over the tokenizer even when wall-clock scaling is swamped by other load.
double cpu_now() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

double since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

std::vector<std::string> read_docs(const std::string& path, uint64_t& bytes) {
  std::ifstream in(path);
  std::vector<std::string> docs;
  std::string line;
  bytes = 0;
  while (std::getline(in, line)) {
    bytes += line.size() + 1;
    if (line.find_first_not_of(" \t\r") != std::string::npos) docs.push_back(line);
  }
  return docs;
}

// Tokenizer-only: encode_ids over every document, split between `threads` threads.
double tokenize_only(const tok::Tokenizer& t, const std::vector<std::string>& docs,
                     unsigned threads, uint64_t& tokens, double& cpu) {
  std::vector<uint64_t> counts(threads, 0);
  auto t0 = Clock::now();
  const double c0 = cpu_now();
  std::vector<std::thread> pool;
  for (unsigned k = 0; k < threads; ++k)
    pool.emplace_back([&, k] {
      std::vector<uint32_t> ids;
      uint64_t count = 0;  // written to counts[k] once: the threads' counts share a cache line
      for (size_t i = k; i < docs.size(); i += threads) {
        ids.clear();
        t.encode_ids(docs[i], ids);
        count += ids.size();
      }
      counts[k] = count;
    });
  for (auto& th : pool) th.join();
  double s = since(t0);
  cpu = cpu_now() - c0;
  tokens = 0;
  for (auto c : counts) tokens += c;
  return s;
}

uint64_t dir_bytes(const fs::path& dir) {
  uint64_t n = 0;
  for (const auto& e : fs::directory_iterator(dir)) n += e.file_size();
  return n;
}

// Re-encodes the records of `src` with other writer settings; returns bytes on disk.
uint64_t rewrite(const fs::path& src, const fs::path& dst, int level, format::BlockFilter filter,
                 uint32_t block) {
  Dataset ds = Dataset::open(src);
  WriterOptions o;
  o.zstd_level = level;
  o.filter = filter;
  o.block_bytes = block;
  o.overwrite = true;
  o.threads = 2;
  DatasetWriter w(dst, ds.schema(), o);
  for (uint64_t b = 0; b < ds.block_count(); ++b) {
    auto blk = ds.block(b);
    w.append_many(blk->bytes.data(), blk->records);
  }
  for (const auto& [k, v] : ds.manifest().metadata) w.set_metadata(k, v);
  w.finish();
  return dir_bytes(dst);
}

// A conversion of a text file as lm (packed), over an earlier output.
shardify::ConvertOptions text_options(const std::string& path, shardify::DocSeparator sep,
                                      const std::string& tokenizer, uint32_t max_len,
                                      const fs::path& out) {
  shardify::ConvertOptions o;
  o.inputs = {path};
  o.format = shardify::InputFormat::kText;
  o.doc_separator = sep;
  o.task.task = shardify::Task::kLm;
  o.task.max_len = max_len;
  o.tokenizer_path = tokenizer;
  o.out = out.string();
  o.force = true;
  return o;
}

// Seconds one thread takes to compress a dataset's raw blocks at `level` (best of `runs`), as
// the converter's writer does: its share of a one-thread conversion.
double zstd_only_seconds(const fs::path& dir, int level, int runs) {
  Dataset ds = Dataset::open(dir);
  std::vector<std::vector<unsigned char>> blocks;
  for (uint64_t b = 0; b < ds.block_count(); ++b) {
    const auto block = ds.block(b);
    blocks.emplace_back(block->bytes.data(), block->bytes.data() + block->bytes.size());
  }
  ZSTD_CCtx* cctx = ZSTD_createCCtx();
  std::vector<unsigned char> out;
  double best = 1e30;
  for (int r = 0; r < runs; ++r) {
    const auto t0 = Clock::now();
    for (const auto& raw : blocks) {
      out.resize(ZSTD_compressBound(raw.size()));
      ZSTD_compressCCtx(cctx, out.data(), out.size(), raw.data(), raw.size(), level);
    }
    best = std::min(best, since(t0));
  }
  ZSTD_freeCCtx(cctx);
  return best;
}

// One large document (--doc-sep file): its parts are tokenized by any thread, so a conversion
// of one file scales with threads as one of many documents does. Baseline: encode_ids of the
// whole text on one thread.
void bench_one_document(const tok::Tokenizer& t, const std::string& tokenizer,
                        const std::string& path, uint32_t max_len, int runs, const fs::path& tmp) {
  std::string doc;
  {
    std::ifstream in(path, std::ios::binary);
    doc.assign(std::istreambuf_iterator<char>(in), {});
  }
  double tok_s = 1e30, conv_s[3] = {1e30, 1e30, 1e30};
  std::vector<uint32_t> ids;
  for (int r = 0; r < runs; ++r) {
    ids.clear();
    const auto t0 = Clock::now();
    t.encode_ids(doc, ids);
    tok_s = std::min(tok_s, since(t0));
    for (unsigned th : {1u, 2u}) {
      shardify::ConvertOptions o =
          text_options(path, shardify::DocSeparator::kFile, tokenizer, max_len, tmp / "onedoc");
      o.threads = th;
      const auto c0 = Clock::now();
      shardify::convert(o);
      conv_s[th] = std::min(conv_s[th], since(c0));
    }
  }
  const double mb = doc.size() / 1e6;
  std::printf("\none document of %.2f MB (%s), MB/s: %10s %10s %8s\n", mb, path.c_str(), "1 thread",
              "2 threads", "scaling");
  std::printf("%-34s %10.2f %10s\n", "tokenizer only (encode_ids, whole)", mb / tok_s, "");
  std::printf("%-34s %10.2f %10.2f %7.2fx\n", "shardify end to end (--doc-sep file)",
              mb / conv_s[1], mb / conv_s[2], conv_s[1] / conv_s[2]);
}

// Many small files (--doc-sep file, each a document of about 4 KB: a directory of articles),
// beside the same documents in one file separated by blank lines (--doc-sep blank), one thread:
// what opening, sizing and reading each file costs. Up to 12 MB of the text's lines under 4 KB.
void bench_many_files(const std::vector<std::string>& docs, const std::string& tokenizer,
                      uint32_t max_len, int runs, const fs::path& tmp) {
  const fs::path dir = tmp / "files";
  fs::create_directories(dir);
  std::ofstream joined(tmp / "files.txt", std::ios::binary);
  std::string group;
  size_t files = 0, bytes = 0;
  const auto flush = [&] {
    char name[32];
    std::snprintf(name, sizeof name, "doc-%06zu.txt", files++);
    std::ofstream(dir / name, std::ios::binary) << group;
    joined << group << "\n";
    bytes += group.size();
    group.clear();
  };
  for (size_t i = 0; i < docs.size() && bytes < (12u << 20); ++i) {
    if (docs[i].size() >= 4096) continue;  // a file of one long line is not a small file
    group += docs[i] + "\n";
    if (group.size() >= 4096) flush();
  }
  if (!group.empty()) flush();
  joined.close();
  double seconds[2] = {1e30, 1e30};
  uint64_t tokens[2] = {0, 0};
  for (int r = 0; r < runs; ++r)
    for (int blank : {0, 1}) {
      shardify::ConvertOptions o =
          blank ? text_options((tmp / "files.txt").string(), shardify::DocSeparator::kBlankLine,
                               tokenizer, max_len, tmp / "files_ds")
                : text_options((dir / "*.txt").string(), shardify::DocSeparator::kFile, tokenizer,
                               max_len, tmp / "files_ds");
      o.threads = 1;
      const auto t0 = Clock::now();
      tokens[blank] = shardify::convert(o).stats.tokens;
      seconds[blank] = std::min(seconds[blank], since(t0));
    }
  const double mb = bytes / 1e6;
  std::printf("\n%zu files of %.1f KB on average (%.2f MB), 1 thread: %10s %10s\n", files,
              bytes / 1e3 / files, mb, "MB/s", "ratio");
  std::printf("%-42s %10.2f %9.2fx\n", "a file a document (--doc-sep file)", mb / seconds[0],
              seconds[1] / seconds[0]);
  std::printf("%-42s %10.2f   (baseline)%s\n", "the same in one file (--doc-sep blank)",
              mb / seconds[1], tokens[0] == tokens[1] ? "" : "  TOKEN COUNTS DIFFER");
}

}  // namespace

int main(int argc_in, char** argv_in) {
  // As shardify does: a whole-file document's rest is the file mapped, not read.
  shardkit::guard_mapped_files();
  std::vector<char*> args;
  std::string document;
  bool speed_only = false;
  for (int i = 0; i < argc_in; ++i) {
    const std::string a = argv_in[i];
    if (a == "--speed-only") {
      speed_only = true;
    } else if (a == "--document" && i + 1 < argc_in) {
      document = argv_in[++i];
    } else {
      args.push_back(argv_in[i]);
    }
  }
  const int argc = static_cast<int>(args.size());
  char** argv = args.data();
  if (argc < 3) {
    std::fprintf(stderr,
                 "usage: %s [--speed-only] [--document FILE] TOKENIZER TEXT_FILE [max_len=512] "
                 "[runs=3] [tokenizer_config.json]\n"
                 "  (the last adds the sft rows, rendering with its chat template)\n",
                 argv[0]);
    return 2;
  }
  const std::string tokenizer = argv[1], text = argv[2];
  const uint32_t max_len = argc > 3 ? std::stoul(argv[3]) : 512;
  const int runs = argc > 4 ? std::stoi(argv[4]) : 3;
  if (document.empty()) document = text;
  const fs::path tmp = fs::temp_directory_path() / ("bench_shardify_" + std::to_string(::getpid()));
  fs::create_directories(tmp);

  uint64_t bytes = 0;
  const auto docs = read_docs(text, bytes);
  const auto load0 = Clock::now();
  const double load_c0 = cpu_now();
  auto t = tok::Tokenizer::from_file(tokenizer);
  const double load_s = since(load0), load_cpu = cpu_now() - load_c0;
  std::printf(
      "input        %s: %.2f MB, %zu documents; tokenizer %s; max_len %u; best of %d runs\n",
      text.c_str(), bytes / 1e6, docs.size(), tokenizer.c_str(), max_len, runs);

  double tok_best[3] = {1e30, 1e30, 1e30};
  uint64_t tokens = 0;
  double tok_cpu[3] = {1e30, 1e30, 1e30};
  for (int r = 0; r < runs; ++r)
    for (unsigned th : {1u, 2u}) {
      double cpu = 0;
      tok_best[th] = std::min(tok_best[th], tokenize_only(*t, docs, th, tokens, cpu));
      tok_cpu[th] = std::min(tok_cpu[th], cpu);
    }

  double conv_best[3] = {1e30, 1e30, 1e30}, conv_cpu[3] = {1e30, 1e30, 1e30};
  shardify::ConvertResult result;
  // Slot 0: one thread at zstd level 1, the cheaper setting.
  for (int r = 0; r < runs; ++r)
    for (unsigned th : {0u, 1u, 2u}) {
      // a document per line: many examples
      shardify::ConvertOptions o =
          text_options(text, shardify::DocSeparator::kLine, tokenizer, max_len, tmp / "ds");
      o.threads = std::max(1u, th);
      if (th == 0) o.zstd_level = 1;
      auto t0 = Clock::now();
      const double c0 = cpu_now();
      result = shardify::convert(o);
      conv_best[th] = std::min(conv_best[th], since(t0));
      conv_cpu[th] = std::min(conv_cpu[th], cpu_now() - c0);
    }
  // The records and sizes below are those of the default setting.
  result = shardify::convert(
      text_options(text, shardify::DocSeparator::kLine, tokenizer, max_len, tmp / "ds"));
  const double mb = bytes / 1e6;
  std::printf("\n%-34s %10s %10s %8s\n", "throughput (MB/s of input text)", "1 thread", "2 threads",
              "scaling");
  std::printf("%-34s %10.2f %10.2f %7.2fx\n", "tokenizer only (encode_ids)", mb / tok_best[1],
              mb / tok_best[2], tok_best[1] / tok_best[2]);
  std::printf("%-34s %10.2f %10.2f %7.2fx\n", "shardify end to end (lm, packed)", mb / conv_best[1],
              mb / conv_best[2], conv_best[1] / conv_best[2]);
  std::printf("%-34s %10.2f %10.2f %7.2fx\n", "  the same without tokenizer load",
              mb / (conv_best[1] - load_s), mb / (conv_best[2] - load_s),
              (conv_best[1] - load_s) / (conv_best[2] - load_s));
  std::printf("%-34s %9.0f%% %9.0f%%   (tokenizer load %.3f s, inside each conversion)\n",
              "end to end / tokenizer only", 100 * tok_best[1] / (conv_best[1] - load_s),
              100 * tok_best[2] / (conv_best[2] - load_s), load_s);
  std::printf("%-34s %9.0f%% %9.0f%%\n", "  the same, load included",
              100 * tok_best[1] / conv_best[1], 100 * tok_best[2] / conv_best[2]);
  std::printf("%-34s %10.2f %10.2f\n", "MB per CPU second, tokenizer only", mb / tok_cpu[1],
              mb / tok_cpu[2]);
  std::printf("%-34s %10.2f %10.2f\n", "MB per CPU second, end to end", mb / conv_cpu[1],
              mb / conv_cpu[2]);
  std::printf("%-34s %10.2f %10.2f\n", "  the same without tokenizer load",
              mb / (conv_cpu[1] - load_cpu), mb / (conv_cpu[2] - load_cpu));
  std::printf("%-34s %10.2f %10s\n", "  ... at --zstd-level 1 (load incl.)", mb / conv_cpu[0], "");
  // What one thread cannot beat: zstd alone on the conversion's records, and with the
  // tokenizer's own time beside it.
  const double zstd_s = zstd_only_seconds(tmp / "ds", 3, runs);
  std::printf("%-34s %10.2f   (records of the default conversion, zstd level 3, 1 thread)\n",
              "zstd alone, MB/s of input text", mb / zstd_s);
  std::printf("%-34s %10.2f   (1 / (1/tokenizer only + 1/zstd alone))\n",
              "  1-thread bound: tokenizer + zstd", mb / (tok_best[1] + zstd_s));
  bench_one_document(*t, tokenizer, document, max_len, runs, tmp);
  bench_many_files(docs, tokenizer, max_len, runs, tmp);
  if (speed_only) {
    fs::remove_all(tmp);
    return 0;
  }

  shardkit::bench::bench_input_formats(tokenizer, docs, bytes, max_len, runs, tmp, cpu_now);
  shardkit::bench::bench_merge(tokenizer, docs, max_len, runs, tmp);
  if (argc > 5) shardkit::bench::bench_sft(tokenizer, argv[5], docs, max_len, runs, tmp);

  // Storage. Real tokens: every stored non-pad token (documents' ids plus one separator each).
  const uint64_t real = result.stats.tokens;
  const uint64_t ds_bytes = dir_bytes(tmp / "ds");
  const uint64_t ndocs = result.stats.examples;
  // Megatron MMapIndexedDataset: .bin = uint16 tokens; .idx = 9 magic + 8 version + 1 dtype +
  // 8 sizes count + 8 doc count + int32 size and int64 pointer per sequence + int64 doc index.
  const uint64_t megatron_bin = 2 * real;
  const uint64_t megatron_idx = 9 + 8 + 1 + 8 + 8 + 12 * ndocs + 8 * (ndocs + 1);

  // torch.save baselines: the same documents' ids (with separators) as int64 tensors.
  const fs::path ids_file = tmp / "ids.u32", lens_file = tmp / "lens.u32";
  {
    std::ofstream ids(ids_file, std::ios::binary), lens(lens_file, std::ios::binary);
    std::vector<uint32_t> v;
    const uint32_t sep =
        t->special_tokens().eos ? *t->special_tokens().eos : *t->special_tokens().sep;
    for (const auto& d : docs) {
      v.clear();
      t->encode_ids(d, v);
      if (v.empty()) continue;
      v.push_back(sep);
      uint32_t n = static_cast<uint32_t>(v.size());
      ids.write(reinterpret_cast<const char*>(v.data()), 4 * v.size());
      lens.write(reinterpret_cast<const char*>(&n), 4);
    }
  }
  const fs::path script = fs::path(SHARDKIT_SOURCE_DIR) / "tests/bench/torch_save_baseline.py";
  const std::string cmd = "/usr/bin/python3 " + script.string() + " " + ids_file.string() + " " +
                          lens_file.string() + " " + std::to_string(max_len) + " " + tmp.string();
  std::string py;
  if (FILE* p = ::popen(cmd.c_str(), "r")) {
    char buf[512];
    while (std::fgets(buf, sizeof buf, p)) py += buf;
    ::pclose(p);
  }
  uint64_t torch_list = 0, torch_packed = 0;
  std::sscanf(py.c_str(), "%lu %lu", &torch_list, &torch_packed);

  std::printf("\n%-46s %12s %12s\n", "storage of the same tokens", "bytes", "bytes/token");
  auto row = [&](const char* what, uint64_t b) {
    std::printf("%-46s %12llu %12.3f\n", what, (unsigned long long)b, double(b) / double(real));
  };
  std::printf("real tokens: %llu (documents: %llu)\n", (unsigned long long)real,
              (unsigned long long)ndocs);
  row("shardkit dataset (shardify defaults)", ds_bytes);
  row("Megatron uint16 .bin + .idx", megatron_bin + megatron_idx);
  if (torch_list) row("torch.save list of int64 tensors (per doc)", torch_list);
  if (torch_packed) row("torch.save int64 [N, max_len] (packed)", torch_packed);
  std::printf("shardkit / Megatron: %.3fx\n",
              double(ds_bytes) / double(megatron_bin + megatron_idx));

  std::printf("\n%-40s %12s %12s\n", "writer settings (same records)", "bytes", "bytes/token");
  for (auto filter : {format::BlockFilter::kNone, format::BlockFilter::kBytePlanes})
    for (int level : {1, 3, 9, 19})
      for (uint32_t block : {64u << 10, 256u << 10, 1u << 20}) {
        char name[96];
        std::snprintf(name, sizeof name, "%s zstd %d, %u KiB blocks",
                      filter == format::BlockFilter::kNone ? "no filter  " : "byte planes", level,
                      block >> 10);
        uint64_t b = rewrite(tmp / "ds", tmp / "re", level, filter, block);
        std::printf("%-40s %12llu %12.3f\n", name, (unsigned long long)b, double(b) / double(real));
      }

  // Compressed inputs (gzip -6, zstd -3 of the same text, made by the system's programs) beside
  // the plain file, interleaved in one loop. A compressed file is decoded once to check it before
  // it is read (lib/shardify/byte_source.cc): "read_all" is that whole read, both decodes.
  std::printf("\n%-34s %10s %10s %10s %10s\n", "input file (1 thread, best of runs)", "MB on disk",
              "convert", "vs plain", "read_all");
  const std::vector<std::pair<std::string, std::string>> inputs = {
      {"plain", ""}, {"gzip -6", "gzip -6 -c"}, {"zstd -3", "zstd -3 -q -c"}};
  std::vector<fs::path> paths;
  std::vector<double> convert_s(inputs.size(), 1e30), read_s(inputs.size(), 1e30);
  for (const auto& [name, cmd] : inputs) {
    if (cmd.empty()) {
      paths.push_back(text);
      continue;
    }
    paths.push_back(tmp / ("input" + std::string(name[0] == 'g' ? ".gz" : ".zst")));
    const std::string c = cmd + " '" + text + "' > '" + paths.back().string() + "'";
    if (std::system(c.c_str()) != 0) paths.back().clear();
  }
  for (int r = 0; r < runs; ++r)
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (paths[i].empty()) continue;
      shardify::ConvertOptions o;
      o.inputs = {paths[i].string()};
      o.format = shardify::InputFormat::kText;
      o.task.max_len = max_len;
      o.tokenizer_path = tokenizer;
      o.out = (tmp / "ds").string();
      o.force = true;
      auto t0 = Clock::now();
      shardify::convert(o);
      convert_s[i] = std::min(convert_s[i], since(t0));
      t0 = Clock::now();
      shardify::read_all(paths[i]);
      read_s[i] = std::min(read_s[i], since(t0));
    }
  for (size_t i = 0; i < inputs.size(); ++i)
    if (!paths[i].empty())
      std::printf("%-34s %10.2f %9.2fs %9.2fx %9.2fs\n", inputs[i].first.c_str(),
                  fs::file_size(paths[i]) / 1e6, convert_s[i], convert_s[i] / convert_s[0],
                  read_s[i]);
  fs::remove_all(tmp);
  return 0;
}
