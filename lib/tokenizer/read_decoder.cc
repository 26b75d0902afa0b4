// decoder for the general pipeline: Replace, ByteFallback, Fuse, Strip, Metaspace, WordPiece,
// BPEDecoder and Sequence.
#include "tokenizer/readers.h"

namespace shardkit::tok {

Decoder read_decoder(const Json& j, element e, const std::string& where) {
  std::string type = j.type_of(e, where);
  object o = j.obj(e, where);
  Decoder d;
  if (type == "Sequence") {
    d.kind = Decoder::kSequence;
    size_t k = 0;
    for (element x : j.arr(j.get(o, "decoders", where), where + ".decoders"))
      d.children.push_back(read_decoder(j, x, where + ".decoders[" + std::to_string(k++) + "]"));
  } else if (type == "Replace") {
    d.kind = Decoder::kReplace;
    d.regex = read_pattern(j, o, where, &d.pattern);
    d.content = j.str(j.get(o, "content", where), where + ".content");
  } else if (type == "ByteFallback") {
    d.kind = Decoder::kByteFallback;
  } else if (type == "Fuse") {
    d.kind = Decoder::kFuse;
  } else if (type == "Strip") {
    d.kind = Decoder::kStrip;
    d.content = j.str(j.get(o, "content", where), where + ".content");
    d.start = j.uint(j.get(o, "start", where), where + ".start");
    d.stop = j.uint(j.get(o, "stop", where), where + ".stop");
  } else if (type == "Metaspace") {
    d.kind = Decoder::kMetaspace;
    d.replacement = j.opt_str(o, "replacement", where).value_or(std::string(kSentencePieceSpace));
    auto scheme = j.opt_str(o, "prepend_scheme", where);
    d.prepend = scheme ? *scheme != "never" : j.boolean(o, "add_prefix_space", true, where);
  } else if (type == "WordPiece") {
    d.kind = Decoder::kWordPiece;
    d.prefix = j.opt_str(o, "prefix", where).value_or("##");
    d.cleanup = j.boolean(o, "cleanup", true, where);
  } else if (type == "BPEDecoder") {
    d.kind = Decoder::kBpe;
    d.suffix = j.opt_str(o, "suffix", where).value_or("</w>");
  } else {
    j.unsupported(where + ": decoder type '" + type + "' is not supported with this model");
  }
  return d;
}

}  // namespace shardkit::tok
