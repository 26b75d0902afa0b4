// bench_shardify's merge rows: the documents split over four files, converted as one run and as
// --part 0/4 .. 3/4, then `shardify merge`d. The baseline in the same run is the single
// conversion; merge re-encodes every block (for byte-identical output), so its cost is a decode
// and a compress per block, which the ratio puts beside the tokenizing it follows.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "shardify/convert.h"
#include "shardify/merge.h"

namespace shardkit::bench {

inline void bench_merge(const std::string& tokenizer, const std::vector<std::string>& docs,
                        uint32_t max_len, int runs, const std::filesystem::path& tmp) {
  namespace fs = std::filesystem;
  using Clock = std::chrono::steady_clock;
  const auto since = [](Clock::time_point t0) {
    return std::chrono::duration<double>(Clock::now() - t0).count();
  };
  constexpr uint32_t kParts = 4;
  const fs::path in = tmp / "merge-in";
  fs::create_directories(in);
  for (uint32_t f = 0; f < kParts; ++f) {
    std::ofstream out(in / ("f" + std::to_string(f) + ".txt"));
    for (size_t i = f * docs.size() / kParts; i < (f + 1) * docs.size() / kParts; ++i)
      out << docs[i] << '\n';
  }
  auto options = [&](const fs::path& out, unsigned threads) {
    shardify::ConvertOptions o;
    o.inputs = {in.string()};
    o.format = shardify::InputFormat::kText;
    o.doc_separator = shardify::DocSeparator::kLine;
    o.task.max_len = max_len;
    o.tokenizer_path = tokenizer;
    o.out = out.string();
    o.force = true;
    o.threads = threads;
    return o;
  };
  double single = 1e30, parts = 1e30, merge1 = 1e30, merge2 = 1e30;
  std::vector<std::string> part_dirs;
  for (int r = 0; r < runs; ++r) {
    auto t0 = Clock::now();
    shardify::convert(options(tmp / "merge-single", 2));
    single = std::min(single, since(t0));
    part_dirs.clear();
    t0 = Clock::now();
    for (uint32_t p = 0; p < kParts; ++p) {
      part_dirs.push_back((tmp / ("merge-part-" + std::to_string(p))).string());
      auto o = options(part_dirs.back(), 2);
      o.part = shardify::PartSpec{p, kParts};
      shardify::convert(o);
    }
    parts = std::min(parts, since(t0));
    for (unsigned threads : {1u, 2u}) {
      t0 = Clock::now();
      shardify::merge_parts((tmp / "merge-out").string(), part_dirs, true, threads);
      (threads == 1 ? merge1 : merge2) = std::min(threads == 1 ? merge1 : merge2, since(t0));
    }
  }
  bool identical = true;
  for (const auto& e : fs::directory_iterator(tmp / "merge-single")) {
    std::ifstream a(e.path(), std::ios::binary),
        b(tmp / "merge-out" / e.path().filename(), std::ios::binary);
    identical = identical && std::equal(std::istreambuf_iterator<char>(a), {},
                                        std::istreambuf_iterator<char>(b), {});
  }
  std::printf("\n%-44s %9s %9s\n", "merge of 4 parts (wall s, 2 threads)", "seconds", "/ single");
  std::printf("%-44s %9.3f %8.2fx\n", "single conversion (baseline)", single, 1.0);
  std::printf("%-44s %9.3f %8.2fx\n", "4 part conversions, one after another", parts,
              parts / single);
  std::printf("%-44s %9.3f %8.2fx\n", "merge, 1 thread", merge1, merge1 / single);
  std::printf("%-44s %9.3f %8.2fx\n", "merge, 2 threads", merge2, merge2 / single);
  std::printf("%-44s %9s\n", "merged dataset byte-identical to single", identical ? "yes" : "NO");
}

}  // namespace shardkit::bench
