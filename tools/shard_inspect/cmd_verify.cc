// shard-inspect verify DIR: every checksum, every block decoded; exit 1 on any fault.
#include <cstdio>
#include <string>

#include "core/progress.h"
#include "core/verify.h"
#include "progress_options.h"
#include "shard_inspect/commands.h"

namespace {

struct VerifyArgs {
  std::string dir;
  bool quiet = false;
  shardkit::ProgressOptions progress;
};

void run_verify(const VerifyArgs& args) {
  shardkit::ProgressReporter reporter("verify", shardkit::ProgressUnit::items("blocks"),
                                      args.progress);
  const shardkit::VerifyReport r = shardkit::verify_dataset(
      args.dir, shardkit::SourceOptions{},
      [&reporter](uint64_t done, uint64_t total) { reporter.update(done, total); });
  reporter.finish();
  for (const auto& f : r.faults) std::printf("FAULT %s\n", f.message.c_str());
  if (r.ok()) {
    if (!args.quiet)
      std::printf("OK: %llu shards, %llu blocks, %llu records verified\n",
                  static_cast<unsigned long long>(r.shards_checked),
                  static_cast<unsigned long long>(r.blocks_checked),
                  static_cast<unsigned long long>(r.records_checked));
  } else {
    std::printf("%zu fault(s); %llu blocks verified\n", r.faults.size(),
                static_cast<unsigned long long>(r.blocks_checked));
    shard_inspect::exit_code() = 1;
  }
}

const shard_inspect::RegisterCommand kVerify([](CLI::App& app) {
  auto args = std::make_shared<VerifyArgs>();
  CLI::App* cmd = app.add_subcommand("verify", "Check every checksum and structural invariant");
  cmd->add_option("dir", args->dir, "Dataset directory or URL (http://, https://, s3://)")
      ->required();
  cmd->add_flag("-q,--quiet", args->quiet, "Print faults only");
  shardkit::tools::add_progress_options(cmd, args->progress);
  cmd->callback([args] { run_verify(*args); });
});

}  // namespace
