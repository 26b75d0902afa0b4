// pre_tokenizer for the general pipeline: Metaspace, Whitespace, WhitespaceSplit, Punctuation,
// Digits, CharDelimiterSplit, Split, UnicodeScripts, BertPreTokenizer and Sequence.
#include "tokenizer/byte_level.h"
#include "tokenizer/readers.h"
#include "tokenizer/unicode.h"

namespace shardkit::tok {

namespace {

char32_t single_char(const Json& j, const std::string& s, const std::string& where) {
  size_t i = 0;
  char32_t c = s.empty() ? 0 : decode_utf8(s, i);
  if (s.empty() || i != s.size()) j.fail(where + " must be one character");
  return c;
}

}  // namespace

SplitBehavior read_split_behavior(const Json& j, object o, const std::string& where,
                                  SplitBehavior fallback) {
  auto b = j.opt_str(o, "behavior", where);
  if (!b) return fallback;
  if (*b == "Removed") return SplitBehavior::kRemoved;
  if (*b == "Isolated") return SplitBehavior::kIsolated;
  if (*b == "MergedWithPrevious") return SplitBehavior::kMergedWithPrevious;
  if (*b == "MergedWithNext") return SplitBehavior::kMergedWithNext;
  if (*b == "Contiguous") return SplitBehavior::kContiguous;
  j.unsupported(where + ": behavior '" + *b + "' is not supported");
}

PreTokenizer read_pre_tokenizer(const Json& j, element e, const std::string& where) {
  std::string type = j.type_of(e, where);
  object o = j.obj(e, where);
  PreTokenizer p;
  if (type == "Sequence") {
    p.kind = PreTokenizer::kSequence;
    size_t k = 0;
    for (element x : j.arr(j.get(o, "pretokenizers", where), where + ".pretokenizers"))
      p.children.push_back(
          read_pre_tokenizer(j, x, where + ".pretokenizers[" + std::to_string(k++) + "]"));
  } else if (type == "Metaspace") {
    p.kind = PreTokenizer::kMetaspace;
    p.replacement = j.opt_str(o, "replacement", where).value_or(std::string(kSentencePieceSpace));
    single_char(j, p.replacement, where + ".replacement");
    auto scheme = j.opt_str(o, "prepend_scheme", where);
    if (scheme) {
      if (*scheme == "always") {
        p.prepend_scheme = PreTokenizer::kAlways;
      } else if (*scheme == "first") {
        p.prepend_scheme = PreTokenizer::kFirst;
      } else if (*scheme == "never") {
        p.prepend_scheme = PreTokenizer::kNever;
      } else {
        j.unsupported(where + ": prepend_scheme '" + *scheme + "' is not supported");
      }
    } else {
      p.prepend_scheme = j.boolean(o, "add_prefix_space", true, where) ? PreTokenizer::kAlways
                                                                       : PreTokenizer::kNever;
    }
    p.split = j.boolean(o, "split", true, where);
  } else if (type == "BertPreTokenizer") {
    p.kind = PreTokenizer::kBert;
  } else if (type == "Whitespace") {
    p.kind = PreTokenizer::kWhitespace;
  } else if (type == "WhitespaceSplit") {
    p.kind = PreTokenizer::kWhitespaceSplit;
  } else if (type == "Punctuation") {
    p.kind = PreTokenizer::kPunctuation;
    p.behavior = read_split_behavior(j, o, where, SplitBehavior::kIsolated);
  } else if (type == "Digits") {
    p.kind = PreTokenizer::kDigits;
    p.individual_digits = j.boolean(o, "individual_digits", false, where);
  } else if (type == "CharDelimiterSplit") {
    p.kind = PreTokenizer::kCharDelimiterSplit;
    p.delimiter = single_char(j, j.str(j.get(o, "delimiter", where), where + ".delimiter"),
                              where + ".delimiter");
  } else if (type == "UnicodeScripts") {
    p.kind = PreTokenizer::kUnicodeScripts;
  } else if (type == "Split") {
    p.kind = PreTokenizer::kSplit;
    p.regex = read_pattern(j, o, where, &p.literal);
    if (!p.regex) p.regex = std::make_shared<Regex>(regex_escape(p.literal));
    p.behavior = read_split_behavior(j, o, where, SplitBehavior::kIsolated);
    p.invert = j.boolean(o, "invert", false, where);
  } else {
    j.unsupported(where + ": pre-tokenizer type '" + type + "' is not supported with this model");
  }
  return p;
}

}  // namespace shardkit::tok
