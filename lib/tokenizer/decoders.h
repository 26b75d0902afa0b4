// HF tokenizers' decoders: model tokens back to text. Replace, ByteFallback, Fuse, Strip,
// Metaspace, WordPiece, BPEDecoder and Sequence work on the token strings in turn (HF's
// decode_chain); the result is joined.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "tokenizer/unicode.h"

namespace shardkit::tok {

class Regex;

struct Decoder {
  enum Kind {
    kSequence,
    kReplace,
    kByteFallback,
    kFuse,
    kStrip,
    kMetaspace,
    kWordPiece,
    kBpe,
  } kind = kSequence;
  std::string pattern;                           // kReplace (String)
  std::shared_ptr<const Regex> regex;            // kReplace (Regex)
  std::string content;                           // kReplace replacement; kStrip character
  size_t start = 0, stop = 0;                    // kStrip
  std::string replacement{kSentencePieceSpace};  // kMetaspace
  bool prepend = true;                           // kMetaspace: prepend_scheme is not "never"
  // kMetaspace as SentencePiece decodes (.model files): of the first token, only a leading
  // replacement goes (HF drops every replacement in the first token).
  bool first_leading_only = false;
  std::string prefix = "##";      // kWordPiece
  bool cleanup = true;            // kWordPiece
  std::string suffix = "</w>";    // kBpe
  std::vector<Decoder> children;  // kSequence

  void decode_chain(std::vector<std::string>& tokens) const;
};

}  // namespace shardkit::tok
