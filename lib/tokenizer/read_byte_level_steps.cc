// Byte-level BPE's pre-tokenizer: Split patterns (hand-matched when they are GPT-2's, cl100k's,
// Qwen's, o200k's, Tekken's or DeepSeek-V3's) ending in ByteLevel.
#include "tokenizer/readers.h"

namespace shardkit::tok {

void read_byte_level_steps(const Json& j, element e, const std::string& where,
                           std::vector<PreTokenizerStep>& steps) {
  if (e.is_null())
    j.unsupported(where + ": BPE without a ByteLevel pre-tokenizer is not supported");
  std::string type = j.type_of(e, where);
  object o = j.obj(e, where);
  if (type == "Sequence") {
    size_t k = 0;
    for (element x : j.arr(j.get(o, "pretokenizers", where), where + ".pretokenizers"))
      read_byte_level_steps(j, x, where + ".pretokenizers[" + std::to_string(k++) + "]", steps);
    return;
  }
  if (!steps.empty() && steps.back().kind == PreTokenizerStep::kByteLevel)
    j.unsupported(where + ": pre-tokenizers after ByteLevel are not supported");
  PreTokenizerStep step;
  if (type == "ByteLevel") {
    step.kind = PreTokenizerStep::kByteLevel;
    step.add_prefix_space = j.boolean(o, "add_prefix_space", true, where);
    step.use_regex = j.boolean(o, "use_regex", true, where);
  } else if (type == "Split") {
    step.kind = PreTokenizerStep::kSplit;
    step.regex = std::const_pointer_cast<Regex>(read_pattern(j, o, where, nullptr));
    step.matcher = hand_matcher(step.regex->pattern());
    step.behavior = read_split_behavior(j, o, where, SplitBehavior::kIsolated);
    step.invert = j.boolean(o, "invert", false, where);
  } else {
    j.unsupported(where + ": pre-tokenizer type '" + type + "' is not supported with BPE");
  }
  steps.push_back(std::move(step));
}

}  // namespace shardkit::tok
