// SentencePiece .model files (a protobuf ModelProto).
#include "tokenizer/readers.h"

namespace shardkit::tok {

std::unique_ptr<Tokenizer> load_sentencepiece(const std::string& content, const std::string& source,
                                              uint64_t fingerprint) {
  (void)content;
  (void)fingerprint;
  throw Error(ErrorCode::kUnsupported, source,
              "SentencePiece .model files are not supported yet: convert the model to "
              "tokenizer.json (tests/oracle/spm_to_tokenizer_json.js) and load that");
}

}  // namespace shardkit::tok
