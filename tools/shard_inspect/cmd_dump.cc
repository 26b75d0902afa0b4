// shard-inspect dump DIR [--from I] [--count N] [--json] [--decode TOKENIZER]
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/dataset.h"
#include "core/error.h"
#include "core/json_text.h"
#include "core/record_json.h"
#include "count_check.h"
#include "shard_inspect/commands.h"
#include "shard_inspect/source_flags.h"
#include "tokenizer/tokenizer.h"

namespace {

struct DumpArgs {
  std::string dir;
  uint64_t from = 0;
  uint64_t count = 10;
  bool json = false;
  std::string decode;  // tokenizer file: show token strings and text beside input_ids
  bool force_tokenizer = false;
};

// The tokenizer at `path`, refused when it is not the one the dataset records (its ids would
// decode to other tokens without a word of warning) unless `force`.
std::unique_ptr<shardkit::tok::Tokenizer> decoding_tokenizer(const std::string& path,
                                                             const shardkit::Dataset& ds,
                                                             bool force) {
  auto tok = shardkit::tok::Tokenizer::from_file(path);
  const shardkit::TokenizerInfo& made_with = ds.info().tokenizer;
  const shardkit::TokenizerInfo given = tok->describe();
  if (force || made_with.fingerprint.empty() || made_with.fingerprint == given.fingerprint)
    return tok;
  throw shardkit::Error(
      shardkit::ErrorCode::kInvalidArgument, path,
      "is not the tokenizer the dataset was made with: it is " + given.type + " with " +
          std::to_string(given.vocab_size) + " ids, fingerprint " + given.fingerprint +
          "; the dataset's is " + made_with.type + " with " + std::to_string(made_with.vocab_size) +
          " ids, fingerprint " + made_with.fingerprint +
          ". Its ids would decode to other tokens; pass --force-tokenizer to decode anyway");
}

// input_ids of a record, cut to its length field when there is one.
std::vector<uint32_t> record_ids(const shardkit::Schema& schema, const unsigned char* record) {
  std::vector<uint32_t> ids;
  const shardkit::Field* f = schema.find("input_ids");
  if (!f) return ids;
  const size_t n = f->element_count();
  for (size_t k = 0; k < n; ++k) {
    const unsigned char* p = record + f->offset + k * shardkit::dtype_size(f->dtype);
    uint32_t v = 0;
    if (f->dtype == shardkit::DType::kU16) {
      uint16_t x;
      std::memcpy(&x, p, 2);
      v = x;
    } else {
      std::memcpy(&v, p, 4);
    }
    ids.push_back(v);
  }
  if (const shardkit::Field* len = schema.find("length")) {
    uint32_t l;
    std::memcpy(&l, record + len->offset, 4);
    if (l < ids.size()) ids.resize(l);
  }
  return ids;
}

void run_dump(const DumpArgs& args) {
  shardkit::Dataset ds = shardkit::Dataset::open(args.dir, shard_inspect::dataset_options());
  const auto& schema = ds.schema();
  if (args.from >= ds.size())
    throw shardkit::Error(shardkit::ErrorCode::kInvalidArgument, args.dir,
                          "--from " + std::to_string(args.from) +
                              " is past the end: the dataset has " + std::to_string(ds.size()) +
                              " records" +
                              (ds.size() ? " (0.." + std::to_string(ds.size() - 1) + ")" : ""));
  std::unique_ptr<shardkit::tok::Tokenizer> tok;
  if (!args.decode.empty()) tok = decoding_tokenizer(args.decode, ds, args.force_tokenizer);
  std::vector<unsigned char> record(schema.record_size());
  const uint64_t end = std::min<uint64_t>(ds.size(), args.from + args.count);
  for (uint64_t i = args.from; i < end; ++i) {
    ds.read(i, record.data());
    nlohmann::ordered_json tokens = nlohmann::ordered_json::array();
    std::string text;
    if (tok) {
      std::vector<uint32_t> ids = record_ids(schema, record.data());
      for (uint32_t id : ids) tokens.push_back(tok->id_to_token(id));
      text = tok->decode(ids, false);
    }
    const auto json_text = [](const nlohmann::ordered_json& j) { return shardkit::json_text(j); };
    if (args.json) {
      nlohmann::ordered_json j = shardkit::record_json(schema, record.data(), i);
      if (tok) {
        j["tokens"] = tokens;
        j["text"] = text;
      }
      std::printf("%s\n", json_text(j).c_str());
    } else {
      std::printf("record %llu\n", static_cast<unsigned long long>(i));
      for (const auto& f : schema.fields())
        std::printf("  %-18s %s\n", f.name.c_str(),
                    shardkit::field_json(f, record.data()).dump().c_str());
      if (tok) {
        std::printf("  %-18s %s\n", "tokens", json_text(tokens).c_str());
        std::printf("  %-18s %s\n", "text", json_text(nlohmann::ordered_json(text)).c_str());
      }
    }
  }
}

const shard_inspect::RegisterCommand kDump([](CLI::App& app) {
  auto args = std::make_shared<DumpArgs>();
  CLI::App* cmd = app.add_subcommand("dump", "Print records with every field's values");
  cmd->add_option("dir", args->dir, "Dataset directory or URL (http://, https://, s3://)")
      ->required();
  // A negative index or count would wrap to a huge one.
  cmd->add_option("--from", args->from, "First record index")
      ->capture_default_str()
      ->check(shardkit::tools::kCount);
  cmd->add_option("--count", args->count, "Number of records (fewer when the dataset ends)")
      ->capture_default_str()
      ->check(shardkit::tools::kCount);
  cmd->add_flag("--json", args->json, "One JSON object per line");
  cmd->add_option("--decode", args->decode,
                  "Tokenizer file the dataset was made with: also print input_ids' token "
                  "strings and decoded text (up to the length field)");
  cmd->add_flag("--force-tokenizer", args->force_tokenizer,
                "Decode with --decode's tokenizer even when its fingerprint is not the dataset's");
  const auto apply_source_flags = shard_inspect::add_source_flags(cmd);
  cmd->callback([args, apply_source_flags] {
    apply_source_flags();
    run_dump(*args);
  });
});

}  // namespace
