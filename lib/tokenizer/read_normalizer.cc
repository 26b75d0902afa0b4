// normalizer: NFC/NFD/NFKC/NFKD, Lowercase, Strip, StripAccents, Replace, Prepend, Precompiled,
// Sequence (BertNormalizer is read with the fused WordPiece tokenizer).
#include "tokenizer/byte_level.h"
#include "tokenizer/precompiled_charsmap.h"
#include "tokenizer/readers.h"

namespace shardkit::tok {

namespace {

bool base64_decode(std::string_view in, std::string& out) {
  auto value = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
  };
  out.clear();
  uint32_t acc = 0;
  int bits = 0;
  for (char c : in) {
    if (c == '=') break;
    int v = value(c);
    if (v < 0) return false;
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((acc >> bits) & 0xFF));
    }
  }
  return true;
}

}  // namespace

std::shared_ptr<const Regex> read_pattern(const Json& j, object o, const std::string& where,
                                          std::string* literal) {
  object pat = j.obj(j.get(o, "pattern", where), where + ".pattern");
  element v;
  std::string pattern;
  if (!pat.at_key("Regex").get(v)) {
    pattern = j.str(v, where + ".pattern.Regex");
  } else if (!pat.at_key("String").get(v)) {
    std::string s = j.str(v, where + ".pattern.String");
    if (literal) {
      *literal = s;
      return nullptr;
    }
    pattern = regex_escape(s);
  } else {
    j.unsupported(where + ".pattern: only Regex and String patterns are supported");
  }
  try {
    return std::make_shared<Regex>(pattern);
  } catch (const Error& err) {
    j.unsupported(where + ": " + err.reason());
  }
}

Normalizer read_normalizer(const Json& j, element e, const std::string& where) {
  std::string type = j.type_of(e, where);
  object o = j.obj(e, where);
  Normalizer n;
  if (type == "Sequence") {
    n.kind = Normalizer::kSequence;
    size_t k = 0;
    for (element x : j.arr(j.get(o, "normalizers", where), where + ".normalizers"))
      n.children.push_back(
          read_normalizer(j, x, where + ".normalizers[" + std::to_string(k++) + "]"));
  } else if (type == "NFC" || type == "NFD" || type == "NFKC" || type == "NFKD") {
    n.kind = Normalizer::kUnicode;
    n.form = type == "NFC"    ? UnicodeForm::kNFC
             : type == "NFD"  ? UnicodeForm::kNFD
             : type == "NFKC" ? UnicodeForm::kNFKC
                              : UnicodeForm::kNFKD;
  } else if (type == "Lowercase") {
    n.kind = Normalizer::kLowercase;
  } else if (type == "Strip") {
    n.kind = Normalizer::kStrip;
    n.strip_left = j.boolean(o, "strip_left", true, where);
    n.strip_right = j.boolean(o, "strip_right", true, where);
  } else if (type == "StripAccents") {
    n.kind = Normalizer::kStripAccents;
  } else if (type == "Replace") {
    n.kind = Normalizer::kReplace;
    n.regex = read_pattern(j, o, where, &n.pattern);
    n.content = j.str(j.get(o, "content", where), where + ".content");
  } else if (type == "Prepend") {
    n.kind = Normalizer::kPrepend;
    n.content = j.str(j.get(o, "prepend", where), where + ".prepend");
  } else if (type == "Precompiled") {
    n.kind = Normalizer::kPrecompiled;
    std::string blob;
    element m;
    if (!o.at_key("precompiled_charsmap").get(m) && !m.is_null() &&
        !base64_decode(j.str(m, where + ".precompiled_charsmap"), blob))
      j.fail(where + ".precompiled_charsmap is not base64");
    n.charsmap = std::make_shared<PrecompiledCharsmap>(blob, j.source());
  } else {
    j.unsupported(where + ": normalizer type '" + type + "' is not supported");
  }
  return n;
}

}  // namespace shardkit::tok
