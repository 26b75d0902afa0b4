// bench_shardify's sft rows: the same documents as conversations (the first half of each
// document the user's prompt, the rest the assistant's answer), converted as --task sft
// without a template (C++ only), through a chat template (the Python coprocess renderer), and
// packed; the baseline in the same run is --task lm over the same documents as JSONL.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "shardify/convert.h"

namespace shardkit::bench {

inline void bench_sft(const std::string& tokenizer, const std::string& chat_template,
                      const std::vector<std::string>& docs, uint32_t max_len, int runs,
                      const std::filesystem::path& tmp) {
  const auto input = tmp / "sft.jsonl";
  uint64_t bytes = 0;
  {
    std::ofstream out(input);
    for (const std::string& d : docs) {
      size_t cut = d.size() / 2;
      while (cut < d.size() && (static_cast<unsigned char>(d[cut]) & 0xC0) == 0x80) ++cut;
      nlohmann::ordered_json row;
      row["text"] = d;
      row["prompt"] = d.substr(0, cut);
      row["response"] = d.substr(cut);
      row["messages"] =
          nlohmann::ordered_json::array({{{"role", "user"}, {"content", d.substr(0, cut)}},
                                         {{"role", "assistant"}, {"content", d.substr(cut)}}});
      const std::string line = row.dump() + "\n";
      out << line;
      bytes += d.size();
    }
  }
  struct Case {
    const char* name;
    shardify::Task task;
    bool messages, templated, pack;
  };
  const Case cases[] = {
      {"lm over the same text (baseline)", shardify::Task::kLm, false, false, true},
      {"sft prompt+response, no template", shardify::Task::kSft, false, false, false},
      {"sft messages, chat template", shardify::Task::kSft, true, true, false},
      {"sft messages, chat template, packed", shardify::Task::kSft, true, true, true},
  };
  std::printf("\n%-38s %10s %10s %9s %9s\n", "sft (MB/s of document text)", "1 thread", "2 threads",
              "vs lm 1t", "vs lm 2t");
  double base[3] = {0, 0, 0};
  for (const Case& c : cases) {
    double best[3] = {1e30, 1e30, 1e30};
    for (int r = 0; r < runs; ++r)
      for (unsigned th : {1u, 2u}) {
        shardify::ConvertOptions o;
        o.inputs = {input.string()};
        o.format = shardify::InputFormat::kJsonl;
        o.task.task = c.task;
        o.task.max_len = max_len;
        o.task.pack = c.pack;
        o.task.messages = c.messages;
        o.task.sft_truncation = Truncation::kLeft;
        if (c.templated) o.task.chat_template = chat_template;
        o.tokenizer_path = tokenizer;
        o.out = (tmp / "sft-ds").string();
        o.force = true;
        o.threads = th;
        const auto t0 = std::chrono::steady_clock::now();
        shardify::convert(o);
        best[th] = std::min(
            best[th], std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      }
    if (base[1] == 0) base[1] = best[1], base[2] = best[2];
    std::printf("%-38s %10.2f %10.2f %8.2fx %8.2fx\n", c.name, bytes / 1e6 / best[1],
                bytes / 1e6 / best[2], base[1] / best[1], base[2] / best[2]);
  }
}

}  // namespace shardkit::bench
