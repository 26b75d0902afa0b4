// SentencePiece .model files: the ModelProto is parsed by libprotobuf (a dynamic message over
// the fields shardkit reads, declared below with SentencePiece's field numbers; everything else
// is kept as unknown fields), then run by shardkit's own pipeline: SentencePiece's normalizer,
// then Unigram (Viterbi) or BPE (merge by piece score), byte fallback, and the Metaspace decoder.
#include <google/protobuf/descriptor.h>
#include <google/protobuf/descriptor.pb.h>
#include <google/protobuf/dynamic_message.h>

#include <cfloat>
#include <mutex>

#include "tokenizer/pipeline.h"
#include "tokenizer/precompiled_charsmap.h"
#include "tokenizer/readers.h"
#include "tokenizer/sentencepiece_normalizer.h"

namespace shardkit::tok {

namespace {

namespace pb = google::protobuf;

enum PieceType {
  kNormal = 1,
  kUnknown = 2,
  kControl = 3,
  kUserDefined = 4,
  kUnused = 5,
  kByte = 6
};
enum ModelType { kUnigram = 1, kBpe = 2, kWord = 3, kChar = 4 };

void add_field(pb::DescriptorProto* m, const char* name, int number,
               pb::FieldDescriptorProto::Type type, bool repeated = false,
               const char* type_name = nullptr) {
  auto* f = m->add_field();
  f->set_name(name);
  f->set_number(number);
  f->set_type(type);
  f->set_label(repeated ? pb::FieldDescriptorProto::LABEL_REPEATED
                        : pb::FieldDescriptorProto::LABEL_OPTIONAL);
  if (type_name) f->set_type_name(type_name);
}

// The subset of sentencepiece_model.proto shardkit reads (enums as int32: the same varints).
struct Schema {
  pb::DescriptorPool pool;
  const pb::Descriptor* model = nullptr;
  mutable pb::DynamicMessageFactory factory;

  Schema() {
    using T = pb::FieldDescriptorProto;
    pb::FileDescriptorProto file;
    file.set_name("shardkit/sentencepiece_model_subset.proto");
    file.set_package("sentencepiece");
    file.set_syntax("proto2");
    auto* piece = file.add_message_type();
    piece->set_name("SentencePiece");
    add_field(piece, "piece", 1, T::TYPE_STRING);
    add_field(piece, "score", 2, T::TYPE_FLOAT);
    add_field(piece, "type", 3, T::TYPE_INT32);
    auto* trainer = file.add_message_type();
    trainer->set_name("TrainerSpec");
    add_field(trainer, "model_type", 3, T::TYPE_INT32);
    add_field(trainer, "treat_whitespace_as_suffix", 24, T::TYPE_BOOL);
    add_field(trainer, "byte_fallback", 35, T::TYPE_BOOL);
    add_field(trainer, "unk_id", 40, T::TYPE_INT32);
    auto* normalizer = file.add_message_type();
    normalizer->set_name("NormalizerSpec");
    add_field(normalizer, "name", 1, T::TYPE_STRING);
    add_field(normalizer, "precompiled_charsmap", 2, T::TYPE_BYTES);
    add_field(normalizer, "add_dummy_prefix", 3, T::TYPE_BOOL);
    add_field(normalizer, "remove_extra_whitespaces", 4, T::TYPE_BOOL);
    add_field(normalizer, "escape_whitespaces", 5, T::TYPE_BOOL);
    auto* m = file.add_message_type();
    m->set_name("ModelProto");
    add_field(m, "pieces", 1, T::TYPE_MESSAGE, true, ".sentencepiece.SentencePiece");
    add_field(m, "trainer_spec", 2, T::TYPE_MESSAGE, false, ".sentencepiece.TrainerSpec");
    add_field(m, "normalizer_spec", 3, T::TYPE_MESSAGE, false, ".sentencepiece.NormalizerSpec");
    pool.BuildFile(file);
    model = pool.FindMessageTypeByName("sentencepiece.ModelProto");
  }
};

const Schema& schema() {
  static const Schema s;
  return s;
}

// Field access by name with proto2 defaults for absent fields.
struct Reader {
  const pb::Message& m;
  const pb::Reflection* r = m.GetReflection();
  const pb::FieldDescriptor* f(const char* name) const {
    return m.GetDescriptor()->FindFieldByName(name);
  }
  bool has(const char* name) const { return r->HasField(m, f(name)); }
  int32_t i32(const char* name, int32_t fallback) const {
    return has(name) ? r->GetInt32(m, f(name)) : fallback;
  }
  bool b(const char* name, bool fallback) const {
    return has(name) ? r->GetBool(m, f(name)) : fallback;
  }
  std::string s(const char* name) const { return r->GetString(m, f(name)); }
  float fl(const char* name) const { return r->GetFloat(m, f(name)); }
};

}  // namespace

std::unique_ptr<Tokenizer> load_sentencepiece(const std::string& content, const std::string& source,
                                              uint64_t fingerprint) {
  const Schema& sc = schema();
  std::unique_ptr<pb::Message> msg(sc.factory.GetPrototype(sc.model)->New());
  if (!msg->ParseFromString(content))
    throw Error(ErrorCode::kInput, source, "not a SentencePiece model (protobuf ModelProto)");
  Reader root{*msg};
  const pb::Message& trainer = root.r->GetMessage(*msg, root.f("trainer_spec"));
  const pb::Message& norm = root.r->GetMessage(*msg, root.f("normalizer_spec"));
  Reader t{trainer}, n{norm};
  const int pieces = root.r->FieldSize(*msg, root.f("pieces"));
  if (pieces == 0) throw Error(ErrorCode::kInput, source, "SentencePiece model has no pieces");

  std::vector<std::string> vocab(static_cast<size_t>(pieces));
  std::vector<float> scores(vocab.size());
  std::vector<int> types(vocab.size());
  std::optional<uint32_t> unk;
  for (int i = 0; i < pieces; ++i) {
    Reader p{root.r->GetRepeatedMessage(*msg, root.f("pieces"), i)};
    vocab[i] = p.s("piece");
    scores[i] = p.fl("score");
    types[i] = p.i32("type", kNormal);
    if (types[i] < kNormal || types[i] > kByte)
      throw Error(ErrorCode::kUnsupported, source,
                  "SentencePiece piece " + std::to_string(i) + " has unknown type " +
                      std::to_string(types[i]));
    if (types[i] == kUnknown) unk = static_cast<uint32_t>(i);
  }
  const int model_type = t.i32("model_type", kUnigram);
  if (model_type != kUnigram && model_type != kBpe)
    throw Error(ErrorCode::kUnsupported, source,
                std::string("SentencePiece model_type ") + (model_type == kWord ? "WORD" : "CHAR") +
                    " is not supported (UNIGRAM and BPE are)");
  if (t.b("treat_whitespace_as_suffix", false))
    throw Error(ErrorCode::kUnsupported, source,
                "SentencePiece treat_whitespace_as_suffix is not supported");
  const bool byte_fallback = t.b("byte_fallback", false);

  auto spec = std::make_shared<SentencePieceNormalizerSpec>();
  std::string charsmap = n.s("precompiled_charsmap");
  if (!charsmap.empty()) spec->charsmap = std::make_shared<PrecompiledCharsmap>(charsmap, source);
  spec->add_dummy_prefix = n.b("add_dummy_prefix", true);
  spec->remove_extra_whitespaces = n.b("remove_extra_whitespaces", true);
  spec->escape_whitespaces = n.b("escape_whitespaces", true);
  for (size_t i = 0; i < vocab.size(); ++i)
    if (types[i] == kUserDefined) spec->user_defined.push_back(vocab[i]);
  spec->prepare();
  if (model_type == kBpe) spec->prepare_newline_cuts();

  PipelineConfig c;
  Normalizer sn;
  sn.kind = Normalizer::kSentencePiece;
  sn.sentencepiece = spec;
  c.normalizer = std::move(sn);
  if (model_type == kUnigram) {
    UnigramConfig u;
    u.pieces = vocab;
    u.scores.assign(scores.begin(), scores.end());
    u.unk_id = unk;
    u.byte_fallback = byte_fallback;
    u.fuse_unk = true;
    u.matchable.resize(vocab.size());
    u.user_defined.resize(vocab.size());
    for (size_t i = 0; i < vocab.size(); ++i) {
      u.matchable[i] = types[i] == kNormal || types[i] == kUserDefined;
      u.user_defined[i] = types[i] == kUserDefined;
    }
    c.model = make_unigram_model(std::move(u), source);
  } else {
    BpeModelConfig b;
    b.vocab = vocab;
    b.scores = scores;
    b.mergeable.resize(vocab.size());
    for (size_t i = 0; i < vocab.size(); ++i) {
      b.mergeable[i] = types[i] == kNormal || types[i] == kUserDefined || types[i] == kUnused;
      if (types[i] == kUserDefined) b.user_defined.push_back(static_cast<uint32_t>(i));
    }
    if (unk) b.unk_token = vocab[*unk];
    b.fuse_unk = true;
    b.byte_fallback = byte_fallback;
    c.model = make_bpe_model(std::move(b), source);
  }
  Decoder d;
  d.kind = Decoder::kSequence;
  if (byte_fallback) {
    Decoder bf;
    bf.kind = Decoder::kByteFallback;
    d.children.push_back(bf);
  }
  Decoder ms;
  ms.kind = Decoder::kMetaspace;
  ms.prepend = spec->add_dummy_prefix;
  ms.first_leading_only = true;
  d.children.push_back(ms);
  c.decoder = std::move(d);

  auto tok = std::make_unique<PipelineTokenizer>(std::move(c));
  tok->set_fingerprint(fingerprint,
                       model_type == kUnigram ? "sentencepiece-unigram" : "sentencepiece-bpe");
  tok->resolve_special_tokens(unk);
  for (size_t i = 0; i < vocab.size(); ++i)
    if (types[i] == kControl || types[i] == kUnknown) tok->mark_special(static_cast<uint32_t>(i));
  return tok;
}

}  // namespace shardkit::tok
