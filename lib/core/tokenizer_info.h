// Which tokenizer made a dataset's ids: the facts a trainer needs without loading it (vocab
// size, the special ids MLM must never mask, a fingerprint to tell two tokenizers apart). The
// tokenizer library produces it (Tokenizer::describe) and DatasetInfo stores it, so both sides
// share one type. SpecialIds::all() lives in dataset_info.cc beside the JSON names of the ids.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace shardkit {

struct SpecialIds {
  std::optional<uint32_t> pad, unk, cls, sep, mask, bos, eos;

  // Every id present, ascending, without repeats (what MLM must never mask).
  std::vector<uint32_t> all() const;
  bool operator==(const SpecialIds&) const = default;
};

struct TokenizerInfo {
  std::string type;         // "wordpiece", "bpe", ...; empty when no tokenizer is known
  uint64_t vocab_size = 0;  // ids are in [0, vocab_size)
  std::string fingerprint;  // XXH3-64 (16 hex digits) of everything that determines the ids
  SpecialIds special;
  bool operator==(const TokenizerInfo&) const = default;
};

}  // namespace shardkit
