#include "tokenizer/unicode_scripts.h"

#include <algorithm>
#include <iterator>

namespace shardkit::tok {

namespace {

struct ScriptRange {
  uint32_t first, last;
  uint8_t script;
};

#include "unicode_scripts_table.inc"

constexpr uint8_t kCommon = 1;
static_assert(kScriptRanges[0].first == 0 && kScriptRanges[0].last >= 0x20,
              "the generated table must start with U+0000..U+0020 (Common)");
static_assert(kScriptRanges[0].script == kCommon);

uint8_t script_of(char32_t c) {
  auto it = std::upper_bound(std::begin(kScriptRanges), std::end(kScriptRanges), c,
                             [](char32_t x, const ScriptRange& r) { return x < r.first; });
  if (it == std::begin(kScriptRanges)) return kScriptAny;
  --it;
  return c <= it->last ? it->script : kScriptAny;
}

const uint8_t kLatin = script_of('a');
// Code points whose Script Unicode changed after 9.0 keep their 9.0 value, as in HF's table:
// U+0589 ARMENIAN FULL STOP and U+061C ARABIC LETTER MARK were Common (now Armenian, Arabic),
// U+0953..U+0954 DEVANAGARI GRAVE/ACUTE ACCENT were Devanagari (now Inherited). Found by
// comparing the table generated from unicode-data 15.0 with HF's; a further change in a newer
// unicode-data would show in unicode_scripts_test.cc, which checks every code point.
const uint8_t kDevanagari = script_of(0x0905);

}  // namespace

uint8_t hf_script(char32_t c) {
  if (c < 0x80) {
    if (c == ' ') return kScriptAny;
    return (c | 0x20) >= 'a' && (c | 0x20) <= 'z' ? kLatin : kCommon;
  }
  if (c == 0x0589 || c == 0x061C) return kCommon;
  if (c == 0x0953 || c == 0x0954) return kDevanagari;
  if (c == 0x30FC) return kScriptHan;
  uint8_t s = script_of(c);
  return s == kScriptHiragana || s == kScriptKatakana ? kScriptHan : s;
}

const char* script_name(uint8_t script) {
  if (script == kScriptAny) return "Any";
  return script < std::size(kScriptNames) ? kScriptNames[script] : "?";
}

const char* script_source() { return kScriptSource; }

}  // namespace shardkit::tok
