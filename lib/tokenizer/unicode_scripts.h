// The Unicode Script property as HF tokenizers' UnicodeScripts pre-tokenizer sees it. HF's table
// (tokenizers/src/pre_tokenizers/unicode_scripts/scripts.rs, generated from SentencePiece's
// script) is Unicode 9.0's; shardkit's is generated at build time from Debian's unicode-data
// (Scripts.txt and DerivedAge.txt, cmake/gen_unicode_scripts.cmake) keeping the code points
// assigned by Unicode 9.0, so both agree on every code point (checked against HF by
// tests/tokenizer/unicode_scripts_test.cc over all of them).
#pragma once

#include <cstdint>

namespace shardkit::tok {

// 0 for HF's `Any`: U+0020 and every code point HF's table does not list (unassigned in
// Unicode 9.0). Other values name scripts (the numbers are the generated table's own).
constexpr uint8_t kScriptAny = 0;

// HF's fixed_script: the character's script, with U+30FC, Hiragana and Katakana counted as Han
// and U+0020 as Any.
uint8_t hf_script(char32_t c);

// The generated table's name of a script value (e.g. "Latin"; "Any" for kScriptAny), and the
// Scripts.txt it came from (e.g. "Scripts-15.0.0.txt").
const char* script_name(uint8_t script);
const char* script_source();

}  // namespace shardkit::tok
