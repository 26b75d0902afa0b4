#include "tokenizer/pipeline.h"

#include <algorithm>

#include "tokenizer/ascii_masks.h"
#include "tokenizer/normalizers.h"
#include "tokenizer/unicode.h"

namespace shardkit::tok {

namespace {

uint32_t next_word(const Encoding& e) { return e.word_ids.empty() ? 0 : e.word_ids.back() + 1; }

// Whether `in`, with each space replaced by `rep`, starts with `rep`: its first rep.size()
// bytes decide it.
bool starts_with_once_replaced(std::string_view in, std::string_view rep) {
  std::string head;
  for (char c : in.substr(0, rep.size())) {
    if (c == ' ')
      head.append(rep);
    else
      head.push_back(c);
  }
  return head.starts_with(rep);
}

}  // namespace

PipelineTokenizer::PipelineTokenizer(PipelineConfig config) : config_(std::move(config)) {
  if (config_.normalizer && config_.normalizer->prepends())
    normalizer_after_cut_ = config_.normalizer->without_prepend();
  prefixes_segments_ = normalizer_after_cut_ ||
                       (config_.pre_tokenizer && config_.pre_tokenizer->prepends_every_text());
  cuts_after_newlines_ = allow_newline_cuts();
}

bool PipelineTokenizer::allow_newline_cuts() {
  const std::optional<Normalizer>& normalizer = part_normalizer();
  if (normalizer && !normalizer->keeps_newline_cuts()) return false;
  if (config_.pre_tokenizer && !config_.pre_tokenizer->keeps_newline_cuts()) return false;
  if (normalizer && normalizer->newline_becomes_word_start())
    return config_.model->keeps_word_start_cuts();
  std::array<bool, 256> refused{};
  if (!config_.model->keeps_newline_cuts(refused)) return false;
  for (int b = 0; b < 256; ++b)
    if (refused[b]) refuse_cuts_before(static_cast<char>(b));
  return true;
}

// Ids only, on a plain string: the pre-tokenizers that reduce to string work run as such (none;
// Metaspace; a String Split whose string does not occur, which leaves the text whole), the
// others through NormalizedString pieces.
bool PipelineTokenizer::plain_pre_tokenizer(std::string_view in) const {
  const PreTokenizer* pre = config_.pre_tokenizer ? &*config_.pre_tokenizer : nullptr;
  return !pre || pre->kind == PreTokenizer::kMetaspace ||
         (pre->kind == PreTokenizer::kSplit && !pre->invert && !pre->literal.empty() &&
          in.find(pre->literal) == std::string_view::npos);
}

void PipelineTokenizer::encode_plain(std::string_view in, PreTokenizer::Start start,
                                     std::vector<uint32_t>& ids) const {
  if (!plain_pre_tokenizer(in)) {
    encode_piece(NormalizedString(in, false), start, 0, ids, nullptr);
    return;
  }
  const PreTokenizer* pre = config_.pre_tokenizer ? &*config_.pre_tokenizer : nullptr;
  if (!pre || pre->kind == PreTokenizer::kSplit) {  // no split where the string does not occur
    config_.model->tokenize_ids(in, in.data() + in.size(), ids);
    return;
  }
  {
    // Metaspace as plain string work (replace spaces, maybe prepend, cut before each
    // replacement), the same pieces as the general path.
    thread_local std::string text;
    const std::string& rep = pre->replacement;
    // The text starts with the replacement once its spaces are replaced, or is given one.
    const bool starts = starts_with_once_replaced(in, rep);
    const bool prepend = !in.empty() && !starts && pre->prepends_at(start);
    replace_byte(in, 0, ' ', rep, text, prepend ? std::string_view(rep) : std::string_view());
    if (!pre->split) {  // one piece
      config_.model->tokenize_ids(text, text.data() + text.size(), ids);
      return;
    }
    // Every piece but perhaps the first starts with a replacement, where find_literal found it.
    // The pieces go to the model a bounded batch at a time (a long text has millions).
    const std::string_view all = text;
    size_t ends[256];
    size_t count = 0, batch_begin = 0, start = 0;
    size_t skip = starts || prepend ? rep.size() : 0;
    while (start < all.size()) {
      size_t next = find_literal(all, start + skip, rep);
      if (next == std::string::npos) next = all.size();
      ends[count++] = next;
      start = next;
      skip = rep.size();
      if (count == std::size(ends) || start == all.size()) {
        config_.model->tokenize_pieces_ids(all, batch_begin, std::span(ends, count), ids);
        batch_begin = start;
        count = 0;
      }
    }
  }
}

void PipelineTokenizer::encode_piece(const NormalizedString& s, PreTokenizer::Start start,
                                     size_t base, std::vector<uint32_t>& ids,
                                     Encoding* detail) const {
  const PreTokenizer* pre = config_.pre_tokenizer ? &*config_.pre_tokenizer : nullptr;
  if (!detail && plain_pre_tokenizer(s.text())) {
    encode_plain(s.text(), start, ids);
    return;
  }
  thread_local std::vector<ModelToken> toks;
  auto tokenize = [&](const NormalizedString& piece) {
    if (!detail) {
      config_.model->tokenize_ids(piece.text(), piece.text().data() + piece.text().size(), ids);
      return;
    }
    // Tokens never outnumber bytes: one reservation instead of doublings that copy a long
    // piece's tokens (untouched capacity costs no memory), and a long piece's list is not kept.
    toks.clear();
    toks.reserve(piece.text().size());
    config_.model->tokenize(piece.text(), toks);
    const uint32_t word = next_word(*detail);
    for (const ModelToken& t : toks) {
      ids.push_back(t.id);
      Span o = piece.original_span(t.begin, t.end);
      detail->offsets.emplace_back(static_cast<uint32_t>(base + o.first),
                                   static_cast<uint32_t>(base + o.second));
      detail->word_ids.push_back(word);
    }
    if (toks.capacity() > kKeptScratchTokens) toks = {};
  };
  if (!pre) {
    tokenize(s);
    return;
  }
  thread_local std::vector<PreTokenizer::Piece> pieces;
  pieces.clear();
  pieces.push_back({s, start});
  pre->apply(pieces);
  for (const PreTokenizer::Piece& p : pieces) tokenize(p.s);
}

void PipelineTokenizer::encode_segment(std::string_view full, size_t begin, size_t end,
                                       std::vector<uint32_t>& ids, Encoding* detail) const {
  encode_normalized(full, begin, end, ids, detail, config_.normalizer,
                    begin == 0 ? PreTokenizer::Start::kText : PreTokenizer::Start::kElsewhere);
}

void PipelineTokenizer::encode_normalized(std::string_view full, size_t begin, size_t end,
                                          std::vector<uint32_t>& ids, Encoding* detail,
                                          const std::optional<Normalizer>& normalizer,
                                          PreTokenizer::Start start) const {
  const AddedTokenMatcher& added = normalized_added();
  if (!detail && added.empty() && (!normalizer || normalizer->is_plain())) {
    // Ids only, with string edits for normalizers: no alignments, no NormalizedString.
    thread_local std::string text;
    text.assign(full.data() + begin, end - begin);
    if (normalizer) normalizer->apply_plain(text);
    encode_plain(text, start, ids);
    if (text.capacity() > kKeptScratchTokens) text = std::string();  // a whole document's
    return;
  }
  // Alignments give offsets, and tell where each normalized gap between added tokens starts in
  // the original (a Metaspace prepends only at its start).
  NormalizedString s(full.substr(begin, end - begin), detail || !added.empty());
  if (normalizer) normalizer->apply(s);
  if (added.empty()) {
    encode_piece(s, start, begin, ids, detail);
    return;
  }
  added.split(s.text(), [&](bool is_token, size_t b, size_t e, uint32_t id) {
    Span o = s.original_span(b, e);
    if (is_token) {
      ids.push_back(id);
      if (detail) {
        detail->offsets.emplace_back(static_cast<uint32_t>(begin + o.first),
                                     static_cast<uint32_t>(begin + o.second));
        detail->word_ids.push_back(next_word(*detail));
      }
      return;
    }
    // Ids only: the gap's text, without the alignments that a copy would carry (8 bytes a byte).
    const NormalizedString gap =
        detail ? s.slice(b, e)
               : NormalizedString(std::string_view(s.text()).substr(b, e - b), false);
    encode_piece(gap, o.first == 0 ? start : PreTokenizer::Start::kElsewhere, begin, ids, detail);
  });
}

// HF's process_offsets (ByteLevel and RobertaProcessing with trim_offsets): leading/trailing
// characters of the token string that are 'Ġ' or White_Space move the offsets by their count.
void PipelineTokenizer::finish_encoding(Encoding& e) const {
  const PostProcessorConfig& pc = post();
  if (!pc.byte_level_trim && !pc.roberta_trim) return;
  const bool add_prefix_space =
      pc.roberta_trim ? pc.roberta_add_prefix_space : pc.byte_level_add_prefix_space;
  auto trimmable = [](char32_t c) { return c == 0x120 || is_white_space(c); };
  for (size_t i = 0; i < e.size(); ++i) {
    const std::string token = id_to_token(e.ids[i]);
    std::vector<char32_t> chars;
    for (size_t k = 0; k < token.size();) chars.push_back(decode_utf8(token, k));
    size_t leading = 0, trailing = 0;
    while (leading < chars.size() && trimmable(chars[leading])) ++leading;
    while (trailing < chars.size() && trimmable(chars[chars.size() - 1 - trailing])) ++trailing;
    auto& off = e.offsets[i];
    if (leading == 0 && trailing == 0) continue;
    if (leading > 0) {
      const bool is_first = i == 0 || off.first == 0;
      if (is_first && add_prefix_space && leading == 1) leading = 0;
      off.first = std::min<uint32_t>(off.first + static_cast<uint32_t>(leading), off.second);
    }
    if (trailing > 0 && off.second >= trailing)
      off.second = std::max<uint32_t>(off.second - static_cast<uint32_t>(trailing), off.first);
  }
}

std::string PipelineTokenizer::decode_tokens(const std::vector<std::string>& tokens) const {
  if (!config_.decoder) {
    std::string out;
    for (size_t i = 0; i < tokens.size(); ++i) {
      if (i) out.push_back(' ');
      out += tokens[i];
    }
    return out;
  }
  std::vector<std::string> t = tokens;
  config_.decoder->decode_chain(t);
  std::string out;
  for (const std::string& x : t) out += x;
  return out;
}

}  // namespace shardkit::tok
