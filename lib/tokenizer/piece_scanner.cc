#include "tokenizer/piece_scanner.h"

namespace shardkit::tok {

std::optional<PiecePattern> piece_pattern(SplitMatcher matcher) {
  if (matcher == gpt2_match) return PiecePattern::kGpt2;
  if (matcher == cl100k_match) return PiecePattern::kCl100k;
  if (matcher == qwen_match) return PiecePattern::kQwen;
  if (matcher == o200k_match) return PiecePattern::kO200k;
  if (matcher == tekken_match) return PiecePattern::kTekken;
  return std::nullopt;
}

}  // namespace shardkit::tok
