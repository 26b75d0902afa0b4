// shard-inspect verify DIR: every checksum, every block decoded; exit 1 on any fault. --json
// prints the report as one JSON object, with the damaged blocks a loader's on_corrupt=skip
// would replace (shard, block in it, global block and the records it holds).
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/dataset_store.h"
#include "core/error.h"
#include "core/geometry.h"
#include "core/json_text.h"
#include "core/location.h"
#include "core/manifest.h"
#include "core/progress.h"
#include "core/verify.h"
#include "progress_options.h"
#include "shard_inspect/commands.h"
#include "shard_inspect/source_flags.h"

namespace {

struct VerifyArgs {
  std::string dir;
  bool quiet = false;
  bool json = false;
  shardkit::ProgressOptions progress;
};

// A fault of one block of a shard the manifest lists, placed in the dataset; null otherwise
// (a shard or manifest that cannot be read at all, which no skip replaces).
nlohmann::json damaged_block(const shardkit::VerifyFault& f, const shardkit::Manifest& m,
                             const shardkit::Geometry& g) {
  if (!f.block) return nullptr;
  for (uint32_t shard = 0; shard < m.shards.size(); ++shard) {
    const std::string& name = m.shards[shard].name;
    if (f.file.size() < name.size() + 1 ||
        f.file.compare(f.file.size() - name.size() - 1, std::string::npos, "/" + name) != 0)
      continue;
    if (*f.block >= g.shard_blocks(shard)) return nullptr;
    uint64_t global = *f.block;
    for (uint32_t s = 0; s < shard; ++s) global += g.shard_blocks(s);
    return {{"file", f.file},
            {"shard", shard},
            {"block", *f.block},
            {"global_block", global},
            {"first_record", g.block_first_record(global)},
            {"records", g.block_records(global)}};
  }
  return nullptr;
}

// Files of a local dataset's directory named like shards that its manifest does not list. No
// reader reads them, so a shard copied in by hand, or left there from another dataset, is said
// rather than passed over in silence. Not a fault: the dataset itself is intact. Nothing for a
// remote dataset, whose objects are not listed.
std::optional<std::vector<std::string>> unlisted_shard_files(const std::string& dir,
                                                             const shardkit::Manifest& m) {
  if (shardkit::is_remote_location(dir)) return std::nullopt;
  std::set<std::string> listed;
  for (const auto& shard : m.shards) listed.insert(shard.name);
  // Named like the shards writers create (shard_file_name), whatever their number.
  const std::filesystem::path shard_extension =
      std::filesystem::path(shardkit::shard_file_name(0)).extension();
  std::vector<std::string> unlisted;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (entry.path().extension() == shard_extension && !listed.count(name))
      unlisted.push_back(name);
  }
  std::sort(unlisted.begin(), unlisted.end());
  return unlisted;
}

void print_unlisted(const std::optional<std::vector<std::string>>& files) {
  if (!files) return;
  const std::vector<std::string>& unlisted = *files;
  const size_t shown = std::min<size_t>(unlisted.size(), 10);
  for (size_t i = 0; i < shown; ++i)
    std::printf("NOTE %s is in the directory but not in manifest.json: no reader reads it\n",
                unlisted[i].c_str());
  if (unlisted.size() > shown)
    std::printf("NOTE %zu more unlisted .shard files\n", unlisted.size() - shown);
}

// `m`: the manifest the shards were verified against; null when it could not be read (the
// report's one fault says why).
void print_json(const shardkit::VerifyReport& r, const shardkit::Manifest* m,
                const std::optional<std::vector<std::string>>& unlisted) {
  nlohmann::json out = {{"ok", r.ok()},
                        {"shards_checked", r.shards_checked},
                        {"blocks_checked", r.blocks_checked},
                        {"records_checked", r.records_checked},
                        {"faults", nlohmann::json::array()},
                        {"damaged_blocks", nlohmann::json::array()}};
  const shardkit::Geometry g = m ? shardkit::Geometry::of(*m) : shardkit::Geometry();
  bool all_skippable = m != nullptr;
  for (const auto& f : r.faults) {
    out["faults"].push_back({{"file", f.file},
                             {"block", f.block ? nlohmann::json(*f.block) : nlohmann::json()},
                             {"message", f.message}});
    nlohmann::json d = m ? damaged_block(f, *m, g) : nullptr;
    if (d.is_null())
      all_skippable = false;
    else
      out["damaged_blocks"].push_back(std::move(d));
  }
  // Whether a loader with on_corrupt="skip" reads past every fault found.
  out["skip_replaces_all"] = all_skippable;
  // null where the directory was not looked at: a remote dataset, or no manifest to compare.
  out["unlisted_shard_files"] = unlisted ? nlohmann::json(*unlisted) : nlohmann::json();
  std::printf("%s\n", shardkit::json_text(out, 2).c_str());
}

// The dataset's store and manifest, loaded once: the shards are verified against it and the
// faults placed in it. A path that holds no dataset (no manifest, no such directory, a file) is
// not a damaged dataset: the error says so, as `info` does, rather than a fault of a manifest
// that never was. A manifest that is there but damaged is a fault, reported with the others.
struct Loaded {
  std::shared_ptr<shardkit::DatasetStore> store;
  std::optional<shardkit::Manifest> manifest;
  std::optional<shardkit::VerifyFault> fault;
};

Loaded load_dataset(const std::string& dir) {
  Loaded d;
  try {
    d.store = shardkit::open_store(dir, shardkit::verify_options(shard_inspect::source_options()));
    d.manifest = d.store->load_manifest();
  } catch (const shardkit::Error& e) {
    if (e.code() == shardkit::ErrorCode::kIo) throw;
    d.fault = shardkit::VerifyFault{e.file(), e.block(), e.what()};
  }
  return d;
}

void run_verify(const VerifyArgs& args) {
  const Loaded d = load_dataset(args.dir);
  shardkit::VerifyReport r;
  if (d.manifest) {
    shardkit::ProgressReporter reporter("verify", shardkit::ProgressUnit::items("blocks"),
                                        args.progress);
    r = shardkit::verify_shards(*d.store, *d.manifest, [&reporter](uint64_t done, uint64_t total) {
      reporter.update(done, total);
    });
    reporter.finish();
  } else {
    r.faults.push_back(*d.fault);
  }
  if (!r.ok()) shard_inspect::exit_code() = 1;
  const std::optional<std::vector<std::string>> unlisted =
      d.manifest ? unlisted_shard_files(args.dir, *d.manifest) : std::nullopt;
  if (args.json) return print_json(r, d.manifest ? &*d.manifest : nullptr, unlisted);
  for (const auto& f : r.faults) std::printf("FAULT %s\n", f.message.c_str());
  if (!args.quiet) print_unlisted(unlisted);
  if (r.ok()) {
    if (!args.quiet)
      std::printf("OK: %llu shards, %llu blocks, %llu records verified\n",
                  static_cast<unsigned long long>(r.shards_checked),
                  static_cast<unsigned long long>(r.blocks_checked),
                  static_cast<unsigned long long>(r.records_checked));
  } else {
    std::printf("%zu fault(s); %llu blocks verified\n", r.faults.size(),
                static_cast<unsigned long long>(r.blocks_checked));
  }
}

const shard_inspect::RegisterCommand kVerify([](CLI::App& app) {
  auto args = std::make_shared<VerifyArgs>();
  CLI::App* cmd = app.add_subcommand("verify", "Check every checksum and structural invariant");
  cmd->add_option("dir", args->dir, "Dataset directory or URL (http://, https://, s3://)")
      ->required();
  cmd->add_flag("-q,--quiet", args->quiet, "Print faults only");
  cmd->add_flag("--json", args->json,
                "Print the report as JSON, listing the damaged blocks on_corrupt=skip replaces");
  shardkit::tools::add_progress_options(cmd, args->progress);
  const auto apply_source_flags = shard_inspect::add_source_flags(cmd);
  cmd->callback([args, apply_source_flags] {
    apply_source_flags();
    run_verify(*args);
  });
});

}  // namespace
