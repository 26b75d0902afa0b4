// shard-inspect info DIR [--json]
#include <cstdio>
#include <string>

#include <nlohmann/json.hpp>
#include "core/dataset.h"
#include "core/json_text.h"
#include "core/location.h"

#include "shard_inspect/commands.h"
#include "shard_inspect/source_flags.h"

namespace {

struct InfoArgs {
  std::string dir;
  bool json = false;
};

std::string_view role_name(const shardkit::Manifest& m, const std::string& field) {
  auto role = m.info.role_of(field);
  return role ? shardkit::field_role_name(*role) : "";
}

std::string shape_text(const shardkit::Field& f) {
  std::string s = "[";
  for (size_t i = 0; i < f.shape.size(); ++i) s += (i ? "," : "") + std::to_string(f.shape[i]);
  return s + "]";
}

void run_info(const InfoArgs& args) {
  const shardkit::Manifest m =
      shardkit::open_store(args.dir, shard_inspect::source_options())->load_manifest();
  const uint64_t records = m.record_count();
  const uint64_t raw = records * m.schema.record_size();
  const uint64_t disk = m.bytes_on_disk();
  const double ratio = disk ? static_cast<double>(raw) / static_cast<double>(disk) : 0.0;
  if (args.json) {
    using nlohmann::ordered_json;
    ordered_json o;
    o["path"] = shardkit::without_secrets(args.dir);
    o["format_version"] = m.format_version;
    o["producer"] = m.producer;
    o["records"] = records;
    o["shards"] = m.shards.size();
    uint64_t blocks = 0;
    for (const auto& s : m.shards)
      blocks += (s.records + m.records_per_block - 1) / m.records_per_block;
    o["blocks"] = blocks;
    o["records_per_block"] = m.records_per_block;
    o["record_size"] = m.schema.record_size();
    o["bytes_on_disk"] = disk;
    o["uncompressed_bytes"] = raw;
    o["compression_ratio"] = ratio;
    ordered_json& schema = o["schema"] = ordered_json::array();
    for (const auto& f : m.schema.fields())
      schema.push_back(ordered_json{{"name", f.name},
                                    {"dtype", shardkit::dtype_name(f.dtype)},
                                    {"shape", f.shape},
                                    {"role", role_name(m, f.name)}});
    ordered_json& files = o["shard_files"] = ordered_json::array();
    for (const auto& s : m.shards)
      files.push_back(ordered_json{{"name", s.name}, {"records", s.records}, {"bytes", s.bytes}});
    o["dataset"] = ordered_json::parse(m.info.to_json());
    ordered_json& meta = o["metadata"] = ordered_json::object();
    for (const auto& [key, value] : m.metadata) meta[key] = ordered_json::parse(value);
    std::printf("%s\n", shardkit::json_text(o).c_str());
    return;
  }
  std::printf("dataset        %s\n", shardkit::without_secrets(args.dir).c_str());
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
    std::printf("  %-20s %-4s %-10s %s\n", f.name.c_str(),
                std::string(shardkit::dtype_name(f.dtype)).c_str(), shape_text(f).c_str(),
                std::string(role_name(m, f.name)).c_str());
  const shardkit::DatasetInfo& info = m.info;
  if (info.task.type) {
    std::printf("task           %s, max_len %u%s\n", shardkit::task_name(*info.task.type),
                info.task.max_len, info.task.packed ? ", packed" : "");
  }
  if (!info.tokenizer.type.empty()) {
    std::printf("tokenizer      %s, vocab %llu, fingerprint %s, special ids",
                info.tokenizer.type.c_str(),
                static_cast<unsigned long long>(info.tokenizer.vocab_size),
                info.tokenizer.fingerprint.c_str());
    const auto& sp = info.tokenizer.special;
    for (const auto& [name, id] :
         {std::pair{"pad", sp.pad}, std::pair{"unk", sp.unk}, std::pair{"cls", sp.cls},
          std::pair{"sep", sp.sep}, std::pair{"mask", sp.mask}, std::pair{"bos", sp.bos},
          std::pair{"eos", sp.eos}})
      if (id) std::printf(" %s=%u", name, *id);
    std::printf("\n");
  }
  if (!info.labels.names.empty()) {
    std::printf("labels        ");
    for (size_t i = 0; i < info.labels.names.size(); ++i)
      std::printf(" %zu=%s", i, info.labels.names[i].c_str());
    std::printf(" (%s order)\n", info.labels.order.c_str());
  }
  if (!info.source.format.empty())
    std::printf("source         %zu %s file(s)\n", info.source.files.size(),
                info.source.format.c_str());
  if (info.part)
    std::printf("part           %u of %u (unmerged)\n", info.part->index, info.part->count);
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
  cmd->add_option("dir", args->dir, "Dataset directory or URL (http://, https://, s3://)")
      ->required();
  cmd->add_flag("--json", args->json, "Print one JSON object");
  const auto apply_source_flags = shard_inspect::add_source_flags(cmd);
  cmd->callback([args, apply_source_flags] {
    apply_source_flags();
    run_info(*args);
  });
});

}  // namespace
