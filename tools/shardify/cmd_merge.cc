// shardify merge OUT PART_DIRS... [--threads N] [--force] [--json]
#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "core/available_cores.h"
#include "core/progress.h"
#include "output_location.h"
#include "progress_options.h"
#include "shardify/commands.h"
#include "shardify/merge.h"

namespace {

struct MergeArgs {
  std::string out;
  std::vector<std::string> parts;
  unsigned threads = shardkit::available_cores();
  bool force = false, json = false;
  shardkit::ProgressOptions progress;
};

const shardify_cli::RegisterCommand kMerge([](CLI::App& app) {
  auto a = std::make_shared<MergeArgs>();
  CLI::App* cmd = app.add_subcommand(
      "merge",
      "Combine the datasets of --part 0/N .. N-1/N into one (records in single-run order)");
  cmd->add_option("out", a->out, "Merged dataset directory, or s3://bucket/prefix")->required();
  cmd->add_option("parts", a->parts, "Part dataset directories, any order")->required();
  cmd->add_option("--threads", a->threads, "Threads that re-encode blocks (default: all cores)");
  cmd->add_flag("--force", a->force, "Replace an existing dataset at OUT");
  cmd->add_flag("--json", a->json, "Print the result as one JSON object");
  shardkit::tools::add_progress_options(cmd, a->progress);
  cmd->callback([a] {
    // An s3:// output is staged beside the first part, on a disk that already holds the data.
    shardify_cli::OutputLocation out(a->out, a->force, [&] {
      return std::filesystem::absolute(a->parts.front()).parent_path();
    });
    shardkit::ProgressReporter reporter("shardify merge", shardkit::ProgressUnit::items("records"),
                                        a->progress);
    auto r = shardkit::shardify::merge_parts(
        out.local(), a->parts, a->force, std::max(1u, a->threads),
        [&reporter](uint64_t done, uint64_t total) { reporter.update(done, total); });
    reporter.finish();
    out.publish();
    if (a->json)
      std::printf("%s\n", r.to_json().c_str());
    else
      std::printf("shardify: merged %llu parts into %s: %llu shards, %llu records, %llu bytes\n",
                  (unsigned long long)r.parts, a->out.c_str(), (unsigned long long)r.shards,
                  (unsigned long long)r.records, (unsigned long long)r.bytes);
  });
});

}  // namespace
