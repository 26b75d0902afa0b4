// The special tokens of a HF tokenizer_config.json beside a tokenizer.json. transformers takes
// bos/eos/pad/... from there, not from tokenizer.json, and the names alone can mislead: Qwen3's
// vocabulary holds an ordinary "</s>", while its end-of-sequence token is <|im_end|>.
#include <filesystem>

#include <simdjson.h>

#include "core/error.h"
#include "tokenizer/json_reader.h"
#include "tokenizer/tokenizer_base.h"

namespace shardkit::tok {

void apply_tokenizer_config(TokenizerBase& tokenizer, const std::filesystem::path& config) {
  if (!std::filesystem::exists(config)) return;
  // On demand: Llama 3's file has a model_max_length of 10^30, a number the DOM parser refuses.
  const std::string content = read_all(config);
  simdjson::padded_string copy;
  simdjson::ondemand::parser parser;
  simdjson::ondemand::document doc;
  simdjson::ondemand::object root;
  if (parser.iterate(padded(content, copy)).get(doc) || doc.get_object().get(root))
    throw Error(ErrorCode::kInput, config.string(), "not a JSON object");
  SpecialIds ids = tokenizer.special_tokens();
  const std::pair<const char*, std::optional<uint32_t> SpecialIds::*> keys[] = {
      {"bos_token", &SpecialIds::bos}, {"eos_token", &SpecialIds::eos},
      {"pad_token", &SpecialIds::pad}, {"cls_token", &SpecialIds::cls},
      {"sep_token", &SpecialIds::sep}, {"mask_token", &SpecialIds::mask}};
  for (const auto& [key, member] : keys) {
    simdjson::ondemand::value v;
    if (root.find_field_unordered(key).get(v)) continue;  // not named: keep the guess
    if (v.is_null()) {
      ids.*member = std::nullopt;
      continue;
    }
    std::string_view content;
    simdjson::ondemand::object added;
    if (v.get_string().get(content) &&
        (v.get_object().get(added) ||
         added.find_field_unordered("content").get_string().get(content)))
      throw Error(ErrorCode::kInput, config.string(),
                  std::string(key) + " is neither a string nor an object with a 'content'");
    const std::optional<uint32_t> id = tokenizer.token_to_id(content);
    if (!id)
      throw Error(ErrorCode::kInput, config.string(),
                  std::string(key) + " '" + std::string(content) + "' is not in the tokenizer");
    ids.*member = id;
  }
  tokenizer.set_special_tokens(ids);
}

}  // namespace shardkit::tok
