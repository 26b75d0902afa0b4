// Tokenizer::from_file on fuzzed tokenizer files, then encoding, post-processing and decoding a
// fixed set of texts with whatever loaded. FUZZ_TOKENIZER_FILE is "tokenizer.json" (the input is
// the file) or "vocab.txt" (the first byte holds the options: bit 0 lowercase, bit 1
// strip_accents; the rest is the file). Loading may fail only with shardkit::Error, and so may
// encoding (say, for a vocabulary without an unknown token); every id produced must lie inside
// the vocabulary.
#include <cstdint>
#include <string>

#include "core/error.h"
#include "fuzz_util.h"
#include "tokenizer/tokenizer.h"

namespace {

const char* const kTexts[] = {
    "Hello, world! The quick brown fox's jumps; it's 2024.",
    "caf\xc3\xa9 na\xc3\xafve \xc3\x85ngstr\xc3\xb6m",
    "\xe4\xb8\xad\xe5\x9b\xbd \xed\x95\x9c\xea\xb5\xad\xec\x96\xb4 \xf0\x9f\x98\x80",
    "  tabs\tand\nnewlines \xe2\x80\x8b zero-width  ",
    "[CLS] [SEP] <|endoftext|> [MASK]",
    "",
};

void check_ids(const shardkit::tok::Tokenizer& t, const std::vector<uint32_t>& ids) {
  for (uint32_t id : ids)
    if (id >= t.vocab_size() && t.id_to_token(id).empty()) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace shardkit;
  const std::string file = FUZZ_TOKENIZER_FILE;
  tok::Tokenizer::LoadOptions options;
  if (file == "vocab.txt") {
    if (size < 1) return 0;
    options.lowercase = data[0] & 1;
    options.strip_accents = (data[0] & 2) != 0;
    ++data, --size;
  }
  static const std::string path = fuzz::scratch_path(file);
  fuzz::write_scratch(path, data, size);
  std::unique_ptr<tok::Tokenizer> t;
  try {
    t = tok::Tokenizer::from_file(path, options);
  } catch (const Error&) {
    return 0;
  }
  t->describe();
  for (const char* text : kTexts) {
    try {
      tok::Encoding e = t->encode(text);
      if (e.offsets.size() != e.ids.size()) __builtin_trap();
      for (const auto& [begin, end] : e.offsets)
        if (begin > end || end > std::char_traits<char>::length(text)) __builtin_trap();
      check_ids(*t, e.ids);
      std::vector<uint32_t> ids;
      t->encode_ids(text, ids);
      if (ids != e.ids) __builtin_trap();  // the fast path must agree with the full one
      tok::Encoding pair = t->post_process(e, t->encode("second"));
      check_ids(*t, pair.ids);
      t->decode(pair.ids, true);
      t->decode(pair.ids, false);
    } catch (const Error&) {
    }
  }
  return 0;
}
