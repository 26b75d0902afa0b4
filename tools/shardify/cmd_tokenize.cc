// `shardify tokenize`: text lines on stdin -> one JSON array of token ids per line on stdout.
// The quickest way to compare shardkit's ids with another tokenizer's.
#include <cstdio>
#include <iostream>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>
#include "core/error.h"
#include "core/json_text.h"
#include "shardify/commands.h"

#include "tokenizer/tokenizer.h"

namespace {

constexpr std::string_view kByteOrderMark = "\xEF\xBB\xBF";

struct TokenizeOptions {
  std::string tokenizer;
  std::string merges;
  bool special = false;
  bool cased = false;
  bool tokens = false;
};

int run_tokenize(const TokenizeOptions& o) {
  shardkit::tok::Tokenizer::LoadOptions lo;
  if (!o.merges.empty()) lo.merges_path = o.merges;
  lo.lowercase = !o.cased;
  auto tok = shardkit::tok::Tokenizer::from_file(o.tokenizer, lo);
  std::string line, out;
  std::vector<uint32_t> ids;
  uint64_t lineno = 0;
  out.reserve(1 << 16);
  while (std::getline(std::cin, line)) {
    ++lineno;
    // A "\r\n" ending is a line's ending, and a byte order mark before the first line is no
    // text, as for shardify's --doc-sep line (line_reader.h): the ids are those it stores.
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (lineno == 1 && line.starts_with(kByteOrderMark)) line.erase(0, kByteOrderMark.size());
    ids.clear();
    try {
      if (o.special) {
        auto e = tok->post_process(tok->encode(line), std::nullopt);
        ids = std::move(e.ids);
      } else {
        tok->encode_ids(line, ids);
      }
    } catch (const shardkit::Error& e) {
      // The lines before the bad one are printed, so the output lines up with the input.
      std::fwrite(out.data(), 1, out.size(), stdout);
      std::fflush(stdout);
      throw shardkit::Error(e.code(), "<stdin>",
                            "line " + std::to_string(lineno) + ": " + e.reason());
    }
    if (o.tokens) {
      // Token strings and the decoded text beside the ids: what people check first.
      nlohmann::ordered_json j;
      j["ids"] = ids;
      nlohmann::ordered_json pieces = nlohmann::ordered_json::array();
      for (uint32_t id : ids) pieces.push_back(tok->id_to_token(id));
      j["tokens"] = std::move(pieces);
      j["text"] = tok->decode(ids, false);
      out += shardkit::json_text(j);
      out.push_back('\n');
    } else {
      out.push_back('[');
      for (size_t i = 0; i < ids.size(); ++i) {
        if (i) out.push_back(',');
        out += std::to_string(ids[i]);
      }
      out += "]\n";
    }
    if (out.size() > (1 << 16) - 4096) {
      std::fwrite(out.data(), 1, out.size(), stdout);
      out.clear();
    }
  }
  std::fwrite(out.data(), 1, out.size(), stdout);
  std::fflush(stdout);
  return 0;
}

const shardify_cli::RegisterCommand kRegister([](CLI::App& app) {
  auto opts = std::make_shared<TokenizeOptions>();
  CLI::App* cmd =
      app.add_subcommand("tokenize",
                         "Tokenize stdin lines (ending in \\n or \\r\\n, as --doc-sep line reads "
                         "them); print one JSON array of ids per line");
  cmd->add_option("--tokenizer", opts->tokenizer,
                  "tokenizer.json, WordPiece vocab.txt or GPT-2 encoder.json")
      ->required();
  cmd->add_option("--merges", opts->merges, "GPT-2 vocab.bpe (default: beside encoder.json)");
  cmd->add_flag("--special", opts->special,
                "apply the post-processor template ([CLS] ... [SEP] and the like)");
  cmd->add_flag("--cased", opts->cased, "vocab.txt only: keep case and accents");
  cmd->add_flag("--tokens", opts->tokens,
                "print {\"ids\", \"tokens\", \"text\"} per line: token strings and decoded text");
  cmd->callback([opts] {
    try {
      shardify_cli::exit_code() = run_tokenize(*opts);
    } catch (const shardkit::Error& e) {
      std::fprintf(stderr, "shardify tokenize: %s\n", e.what());
      shardify_cli::exit_code() = 1;
    }
  });
});

}  // namespace
