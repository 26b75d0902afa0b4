// shard-inspect info DIR [--json]
#include <cstdio>
#include <string>

#include "core/dataset.h"
#include "core/json_text.h"
#include "shard_inspect/commands.h"

namespace {

struct InfoArgs {
  std::string dir;
  bool json = false;
};

std::string shape_text(const shardkit::Field& f) {
  std::string s = "[";
  for (size_t i = 0; i < f.shape.size(); ++i) s += (i ? "," : "") + std::to_string(f.shape[i]);
  return s + "]";
}

void run_info(const InfoArgs& args) {
  const shardkit::Manifest m = shardkit::Manifest::load(args.dir);
  const uint64_t records = m.record_count();
  const uint64_t raw = records * m.schema.record_size();
  const uint64_t disk = m.bytes_on_disk();
  const double ratio = disk ? static_cast<double>(raw) / static_cast<double>(disk) : 0.0;
  if (args.json) {
    std::string o = "{\"path\":" + shardkit::json_quote(args.dir);
    o += ",\"format_version\":" + std::to_string(m.format_version);
    o += ",\"producer\":" + shardkit::json_quote(m.producer);
    o += ",\"records\":" + std::to_string(records);
    o += ",\"shards\":" + std::to_string(m.shards.size());
    o += ",\"blocks\":" + std::to_string([&] {
           uint64_t b = 0;
           for (auto& s : m.shards)
             b += (s.records + m.records_per_block - 1) / m.records_per_block;
           return b;
         }());
    o += ",\"records_per_block\":" + std::to_string(m.records_per_block);
    o += ",\"record_size\":" + std::to_string(m.schema.record_size());
    o += ",\"bytes_on_disk\":" + std::to_string(disk);
    o += ",\"uncompressed_bytes\":" + std::to_string(raw);
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.4f", ratio);
    o += ",\"compression_ratio\":" + std::string(buf);
    o += ",\"schema\":[";
    for (size_t i = 0; i < m.schema.fields().size(); ++i) {
      const auto& f = m.schema.fields()[i];
      o += (i ? "," : "") + std::string("{\"name\":") + shardkit::json_quote(f.name) +
           ",\"dtype\":\"" + std::string(shardkit::dtype_name(f.dtype)) +
           "\",\"shape\":" + shape_text(f) + "}";
    }
    o += "],\"shard_files\":[";
    for (size_t i = 0; i < m.shards.size(); ++i)
      o += (i ? "," : "") + std::string("{\"name\":") + shardkit::json_quote(m.shards[i].name) +
           ",\"records\":" + std::to_string(m.shards[i].records) +
           ",\"bytes\":" + std::to_string(m.shards[i].bytes) + "}";
    o += "],\"metadata\":{";
    size_t k = 0;
    for (const auto& [key, value] : m.metadata)
      o += (k++ ? "," : "") + shardkit::json_quote(key) + ":" + value;
    o += "}}";
    std::printf("%s\n", o.c_str());
    return;
  }
  std::printf("dataset        %s\n", args.dir.c_str());
  std::printf("format         shardkit v%u (written by %s)\n", m.format_version,
              m.producer.c_str());
  std::printf("records        %llu\n", static_cast<unsigned long long>(records));
  std::printf("shards         %zu\n", m.shards.size());
  std::printf("record size    %zu bytes, %u records per block\n", m.schema.record_size(),
              m.records_per_block);
  std::printf("on disk        %.2f MB (%llu bytes)\n", disk / 1e6,
              static_cast<unsigned long long>(disk));
  std::printf("uncompressed   %.2f MB (records / on disk %.2fx)\n", raw / 1e6, ratio);
  std::printf("schema\n");
  for (const auto& f : m.schema.fields())
    std::printf("  %-20s %-4s %s\n", f.name.c_str(),
                std::string(shardkit::dtype_name(f.dtype)).c_str(), shape_text(f).c_str());
  if (!m.metadata.empty()) {
    std::printf("metadata\n");
    for (const auto& [key, value] : m.metadata) {
      std::string shown = value.size() > 200 ? value.substr(0, 200) + "... (" +
                                                   std::to_string(value.size()) + " bytes)"
                                             : value;
      std::printf("  %-20s %s\n", key.c_str(), shown.c_str());
    }
  }
}

const shard_inspect::RegisterCommand kInfo([](CLI::App& app) {
  auto args = std::make_shared<InfoArgs>();
  CLI::App* cmd = app.add_subcommand("info", "Schema, counts, sizes, compression ratio, metadata");
  cmd->add_option("dir", args->dir, "Dataset directory")->required();
  cmd->add_flag("--json", args->json, "Print one JSON object");
  cmd->callback([args] { run_info(*args); });
});

}  // namespace
