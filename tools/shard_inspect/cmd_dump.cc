// shard-inspect dump DIR [--from I] [--count N] [--json]
#include <cstdio>
#include <string>
#include <vector>

#include "core/dataset.h"
#include "core/record_json.h"
#include "shard_inspect/commands.h"

namespace {

struct DumpArgs {
  std::string dir;
  uint64_t from = 0;
  uint64_t count = 10;
  bool json = false;
};

void run_dump(const DumpArgs& args) {
  shardkit::Dataset ds = shardkit::Dataset::open(args.dir);
  const auto& schema = ds.schema();
  std::vector<unsigned char> record(schema.record_size());
  const uint64_t end = std::min<uint64_t>(ds.size(), args.from + args.count);
  for (uint64_t i = args.from; i < end; ++i) {
    ds.read(i, record.data());
    if (args.json) {
      std::printf("%s\n", shardkit::record_json(schema, record.data(), i).dump().c_str());
    } else {
      std::printf("record %llu\n", static_cast<unsigned long long>(i));
      for (const auto& f : schema.fields())
        std::printf("  %-18s %s\n", f.name.c_str(),
                    shardkit::field_json(f, record.data()).dump().c_str());
    }
  }
}

const shard_inspect::RegisterCommand kDump([](CLI::App& app) {
  auto args = std::make_shared<DumpArgs>();
  CLI::App* cmd = app.add_subcommand("dump", "Print records with every field's values");
  cmd->add_option("dir", args->dir, "Dataset directory")->required();
  cmd->add_option("--from", args->from, "First record index");
  cmd->add_option("--count", args->count, "Number of records");
  cmd->add_flag("--json", args->json, "One JSON object per line");
  cmd->callback([args] { run_dump(*args); });
});

}  // namespace
