#include "tokenizer/wordpiece.h"

#include <algorithm>
#include <cstring>

#include "core/error.h"
#include "tokenizer/ascii_masks.h"
#include "tokenizer/byte_key_cache.h"
#include "tokenizer/unicode.h"

namespace shardkit::tok {

struct WordPieceTokenizer::WordState {
  std::string bytes;                 // normalized word, UTF-8
  std::vector<uint32_t> start, end;  // original span of each normalized byte (offsets mode)
  size_t chars = 0;
  bool track = false;
  void clear() {
    bytes.clear();
    start.clear();
    end.clear();
    chars = 0;
  }
};

namespace {

bool is_ascii_punct(unsigned char c) {
  return (c >= 33 && c <= 47) || (c >= 58 && c <= 64) || (c >= 91 && c <= 96) ||
         (c >= 123 && c <= 126);
}

// Whether p[0, 16) is ASCII up to its first wide punctuation character, if any (ascii_masks.h):
// English text, where a window of masks pays.
bool english16(const unsigned char* p) {
  const uint32_t high = high_bytes16(p);
  if (high == 0) return true;
  const size_t k = static_cast<size_t>(std::countr_zero(high));
  return k + 2 < 16 && is_wide_punctuation(p + k);
}

// 'A'-'Z' to 'a'-'z' in eight ASCII bytes at once.
uint64_t ascii_lower(uint64_t x) {
  constexpr uint64_t kOnes = 0x0101010101010101ULL, kHigh = 0x8080808080808080ULL;
  const uint64_t low7 = x & ~kHigh;
  const uint64_t at_least_a = low7 + (0x80 - 'A') * kOnes;  // high bit: byte >= 'A'
  const uint64_t above_z = low7 + (0x7F - 'Z') * kOnes;     // high bit: byte > 'Z'
  const uint64_t upper = at_least_a & ~above_z & ~x & kHigh;
  return x | (upper >> 2);
}

bool is_bert_punct(char32_t cp) {
  return cp < 128 ? is_ascii_punct(static_cast<unsigned char>(cp)) : is_bert_punctuation(cp);
}

}  // namespace

WordPieceTokenizer::WordPieceTokenizer(WordPieceConfig config, const std::string& source)
    : config_(std::move(config)), cache_owner_(new_cache_owner()) {
  whole_.reserve(config_.vocab.size());
  continuation_.reserve(config_.vocab.size());
  const std::string& prefix = config_.continuing_subword_prefix;
  for (size_t id = 0; id < config_.vocab.size(); ++id) {
    const std::string& t = config_.vocab[id];
    if (t.empty() && id + 1 < config_.vocab.size()) continue;
    whole_.set(t, static_cast<uint32_t>(id));
    max_whole_bytes_ = std::max(max_whole_bytes_, t.size());
    if (!prefix.empty() && t.size() > prefix.size() && t.compare(0, prefix.size(), prefix) == 0) {
      continuation_.set(std::string_view(t).substr(prefix.size()), static_cast<uint32_t>(id));
      max_cont_bytes_ = std::max(max_cont_bytes_, t.size() - prefix.size());
    }
  }
  if (prefix.empty()) {
    // Without a prefix, continuation pieces are looked up as they are.
    continuation_ = whole_;
    max_cont_bytes_ = max_whole_bytes_;
  }
  auto add_prefixes = [](StringIdMap& prefixes, std::string_view key, uint32_t id) {
    for (size_t len = 1; len < key.size(); ++len) {
      if ((static_cast<unsigned char>(key[len]) & 0xC0) == 0x80) continue;
      if (prefixes.find(key.substr(0, len)) == StringIdMap::kNone)
        prefixes.set(key.substr(0, len), kPrefixOnly);
    }
    prefixes.set(key, id);
  };
  for (size_t id = 0; id < config_.vocab.size(); ++id) {
    const std::string& t = config_.vocab[id];
    if (whole_.find(t) != static_cast<uint32_t>(id)) continue;  // holes and shadowed duplicates
    add_prefixes(whole_prefixes_, t, static_cast<uint32_t>(id));
    if (!prefix.empty() && t.size() > prefix.size() && t.compare(0, prefix.size(), prefix) == 0 &&
        continuation_.find(std::string_view(t).substr(prefix.size())) == id)
      add_prefixes(continuation_prefixes_, std::string_view(t).substr(prefix.size()),
                   static_cast<uint32_t>(id));
  }
  if (prefix.empty()) continuation_prefixes_ = whole_prefixes_;
  uint32_t unk = whole_.find(config_.unk_token);
  if (unk == StringIdMap::kNone)
    throw Error(ErrorCode::kInput, source,
                "WordPiece unknown token '" + config_.unk_token + "' is not in the vocabulary");
  unk_id_ = unk;

  bmp_.resize(0x10000);
  for (char32_t cp = 0x80; cp < 0x10000; ++cp)
    if (cp < 0xD800 || cp > 0xDFFF) bmp_[cp] = classify(cp);
  for (CharEntry& e : bmp_)
    if (e.kind == CharEntry::kIsolate) e.isolated_id = char_id(std::string_view(e.utf8, e.len));
  wide_punctuation_isolated_ = true;
  for (char32_t cp = 0x2010; cp <= 0x2027; ++cp)
    wide_punctuation_isolated_ &= bmp_[cp].kind == CharEntry::kIsolate;
  const BertNormalizerOptions& n = config_.normalizer;
  for (int c = 0; c < 128; ++c) {
    auto uc = static_cast<unsigned char>(c);
    if (is_ascii_punct(uc))  // a punctuation character is a word of its own
      punct_id_[c] = char_id(std::string_view(reinterpret_cast<const char*>(&uc), 1));
    ascii_map_[c] =
        (n.lowercase && c >= 'A' && c <= 'Z') ? static_cast<char>(c + 32) : static_cast<char>(c);
    bool control = (c < 32 && c != '\t' && c != '\n' && c != '\r') || c == 127;
    bool space = is_white_space(static_cast<char32_t>(c));
    if (n.clean_text && (c == 0 || control)) {
      ascii_class_[c] = kDrop;
    } else if (space) {
      ascii_class_[c] = kSpace;
    } else if (is_ascii_punct(uc)) {
      ascii_class_[c] = kPunct;
    } else {
      ascii_class_[c] = kWordChar;
    }
  }
}

// What tokenize_word gives a word of one character: the character's own token, or [UNK] (a
// character that only begins longer tokens is not one), without tokenize_word's state and
// vector: the table of 63k characters asks it of every Chinese one.
uint32_t WordPieceTokenizer::char_id(std::string_view utf8) const {
  const uint32_t id = whole_.find(utf8);
  return id == StringIdMap::kNone ? unk_id_ : id;
}

void WordPieceTokenizer::tokenize_word(WordState& w, std::vector<uint32_t>& ids,
                                       Encoding* detail) const {
  const std::string& word = w.bytes;
  const size_t n = word.size();
  if (n == 0) return;
  auto* offsets = detail ? &detail->offsets : nullptr;
  const size_t ids_before = ids.size();
  const uint32_t word_id = detail && !detail->word_ids.empty() ? detail->word_ids.back() + 1 : 0;
  struct WordIds {  // one word id per token this call appends
    Encoding* d;
    const std::vector<uint32_t>& ids;
    size_t before;
    uint32_t word;
    ~WordIds() {
      if (d) d->word_ids.resize(d->word_ids.size() + (ids.size() - before), word);
    }
  } word_ids{detail, ids, ids_before, word_id};
  auto span = [&](size_t a, size_t b) {
    return std::pair<uint32_t, uint32_t>{w.start[a], w.end[b - 1]};
  };
  if (w.chars > config_.max_input_chars_per_word) {
    ids.push_back(unk_id_);
    if (offsets) offsets->push_back(span(0, n));
    return;
  }
  const size_t mark = ids.size();
  const size_t offsets_mark = offsets ? offsets->size() : 0;
  size_t start = 0;
  while (start < n) {
    // The whole rest is a token most of the time; otherwise scan forward through the prefixes
    // and keep the longest one that is a token.
    uint32_t found = (start == 0 ? whole_ : continuation_).find(word.data() + start, n - start);
    size_t end = n;
    if (found == StringIdMap::kNone) {
      const StringIdMap& prefixes = start == 0 ? whole_prefixes_ : continuation_prefixes_;
      size_t e = start;
      while (e < n) {
        e += utf8_length(static_cast<unsigned char>(word[e]));
        uint32_t v = prefixes.find(word.data() + start, e - start);
        if (v == StringIdMap::kNone) break;
        if (v != kPrefixOnly) {
          found = v;
          end = e;
        }
      }
    }
    if (found == StringIdMap::kNone) {
      ids.resize(mark);
      ids.push_back(unk_id_);
      if (offsets) {
        offsets->resize(offsets_mark);
        offsets->push_back(span(0, n));
      }
      return;
    }
    ids.push_back(found);
    if (offsets) offsets->push_back(span(start, end));
    start = end;
  }
}

// The same decisions as add_codepoint, for the table.
WordPieceTokenizer::CharEntry WordPieceTokenizer::classify(char32_t cp) const {
  const BertNormalizerOptions& n = config_.normalizer;
  CharEntry e;
  if (n.clean_text && (cp == 0xFFFD || is_bert_control(cp))) {
    e.kind = CharEntry::kDrop;
    return e;
  }
  if (is_white_space(cp)) {
    e.kind = CharEntry::kBreak;
    return e;
  }
  const bool isolate = n.handle_chinese_chars && is_chinese_char(cp);
  char32_t normalized[kMaxBertNormalizedChars];
  const int count = bert_normalize_char(cp, n, normalized);
  std::string bytes;
  int chars = 0;
  bool punct = false;
  for (int k = 0; k < count; ++k) {
    if (is_white_space(normalized[k])) return e;  // kSlow
    punct = punct || is_bert_punct(normalized[k]);
    append_utf8(bytes, normalized[k]);
    ++chars;
  }
  if (bytes.size() > sizeof e.utf8) return e;
  if ((isolate || punct) && chars > 1) return e;
  e.kind = chars == 0           ? CharEntry::kDrop
           : (isolate || punct) ? CharEntry::kIsolate
                                : CharEntry::kAppend;
  e.len = static_cast<uint8_t>(bytes.size());
  e.chars = static_cast<uint8_t>(chars);
  std::memcpy(e.utf8, bytes.data(), bytes.size());
  return e;
}

// One non-ASCII code point at original bytes [start, end): normalize it and feed the result to
// the pre-tokenizer.
void WordPieceTokenizer::add_codepoint(WordState& w, char32_t cp, uint32_t start, uint32_t end,
                                       std::vector<uint32_t>& ids, Encoding* detail) const {
  const BertNormalizerOptions& n = config_.normalizer;
  auto flush = [&] {
    tokenize_word(w, ids, detail);
    w.clear();
  };
  if (n.clean_text) {
    if (cp == 0xFFFD || is_bert_control(cp)) return;
  }
  if (is_white_space(cp)) {
    flush();
    return;
  }
  const bool isolate = n.handle_chinese_chars && is_chinese_char(cp);
  if (isolate) flush();
  char32_t normalized[kMaxBertNormalizedChars];
  const int count = bert_normalize_char(cp, n, normalized);
  for (int k = 0; k < count; ++k) {
    const char32_t x = normalized[k];
    if (is_white_space(x)) {
      flush();
      continue;
    }
    const bool punct = is_bert_punct(x);
    if (punct) flush();
    append_utf8(w.bytes, x);
    if (w.track) {
      w.start.resize(w.bytes.size(), start);
      w.end.resize(w.bytes.size(), end);
    }
    ++w.chars;
    if (punct) flush();
  }
  if (isolate) flush();
}

// Out of line, so that its address is taken once per segment: in a shared object (the Python
// module) GCC recomputes a thread_local's address, a __tls_get_addr call, at every use (6% of
// write_dataset's CPU on short rows when encode_segment used the thread_local directly).
[[gnu::noinline]] WordPieceTokenizer::WordState& WordPieceTokenizer::thread_word_state() {
  thread_local WordState w;
  return w;
}

// Ids only: an ASCII word of up to 16 bytes that a space or punctuation (or the segment's end)
// ends, from the hot table of the thread's words; its normalization is the ASCII map. Returns
// the word's end, or `i` when the word is not such a word (the general loop takes it).
size_t WordPieceTokenizer::ascii_word(const unsigned char* s, size_t i, size_t end, Memo& memo,
                                      WordState& w, std::vector<uint32_t>& ids) const {
  size_t j = i;
  // Letters and digits 16 at a time; the loop then decides the byte that ended them (a control
  // character kept without clean_text goes on with the word).
  if (end - i > HotWords::kMaxKeyBytes) j += alnum_prefix16(s + i);
  while (j < end && j - i <= HotWords::kMaxKeyBytes && s[j] < 0x80 &&
         ascii_class_[s[j]] == kWordChar)
    ++j;
  const size_t n = j - i;
  if (n > HotWords::kMaxKeyBytes ||
      (j < end && (s[j] >= 0x80 || (ascii_class_[s[j]] != kSpace && ascii_class_[s[j]] != kPunct))))
    return i;
  short_word(s + i, n, s + end, memo, w, ids);
  return j;
}

// Every piece that one window of 64 bytes of ASCII text shows whole, found from its class masks
// before any is looked up: words of letters and digits (up to 16 bytes), and punctuation
// characters, each a word of its own (the wide punctuation of English text among them). It stops
// at the first word that another non-ASCII character or a control character (which BERT drops,
// or keeps inside a word) may go on, or that the window cuts.
size_t WordPieceTokenizer::ascii_window(const unsigned char* s, size_t i, size_t end, Memo& memo,
                                        WordState& w, std::vector<uint32_t>& ids) const {
  const size_t n = std::min<size_t>(64, end - i);
  const AsciiMasks m = ascii_masks(reinterpret_cast<const char*>(s + i), n);
  uint64_t wide_starts = 0;
  const uint64_t wide = m.high != 0 && wide_punctuation_isolated_
                            ? wide_punctuation(s + i, n, m.high, wide_starts)
                            : 0;
  const size_t known = std::min<size_t>(std::countr_zero((m.high & ~wide) | m.control), n);
  const bool text_ends = i + known == end;
  const uint64_t alnum = m.letter() | m.digit;
  const uint64_t punct = m.other() | wide_starts;  // before `known`, no controls: punctuation
  const uint64_t shown = known == 64 ? ~uint64_t{0} : (uint64_t{1} << known) - 1;
  size_t done = 0;
  for (uint64_t pieces = ((alnum & ~(alnum << 1)) | punct) & shown; pieces; pieces &= pieces - 1) {
    const size_t b = static_cast<size_t>(std::countr_zero(pieces));
    if ((punct >> b) & 1) {
      if ((wide_starts >> b) & 1) {
        ids.push_back(bmp_[wide_punctuation_at(s + i + b)].isolated_id);
        done = b + 3;
        continue;
      }
      ids.push_back(punct_id_[s[i + b]]);
      done = b + 1;
      continue;
    }
    const size_t e = b + static_cast<size_t>(std::countr_one(alnum >> b));
    if ((e == known && !text_ends) || e - b > HotWords::kMaxKeyBytes) break;
    short_word(s + i + b, e - b, s + end, memo, w, ids);
    done = e;
  }
  return i + done;
}

// The ids of an ASCII word of letters and digits, up to 16 bytes: from the hot table, else the
// map behind it, else the longest-match scan (remembered in both).
[[gnu::always_inline]] inline void WordPieceTokenizer::short_word(
    const unsigned char* p, size_t n, const unsigned char* limit, Memo& memo, WordState& w,
    std::vector<uint32_t>& ids) const {
  // The key from the raw bytes, lowercased eight at a time (a byte-by-byte copy read back as
  // words would stall on store forwarding).
  HotWords::Key key =
      HotWords::key(reinterpret_cast<const char*>(p), n, reinterpret_cast<const char*>(limit));
  if (config_.normalizer.lowercase) {
    key.lo = ascii_lower(key.lo);
    key.hi = ascii_lower(key.hi);
  }
  if (const std::span<const uint32_t> hit = memo.hot.find(key); !hit.empty()) {
    for (uint32_t id : hit) ids.push_back(id);
    return;
  }
  w.bytes.resize(n);
  for (size_t k = 0; k < n; ++k) w.bytes[k] = ascii_map_[p[k]];
  w.chars = n;
  const size_t mark = ids.size();
  // A word of more than three ids is never in the hot table, and its longest-match scan costs a
  // map probe per prefix: the map remembers it.
  end_word(&memo, w, ids, nullptr);
  memo.hot.insert(key, std::span(ids).subspan(mark));
}

// Tokenizes the word gathered in `w` and clears it. Ids only (`memo`), through the map of the
// thread's words: a word gathered a character at a time (Korean, which the uncased
// normalization spells in jamo; accented Latin) cost a map probe per prefix of its
// longest-match scan each time it came back.
void WordPieceTokenizer::end_word(Memo* memo, WordState& w, std::vector<uint32_t>& ids,
                                  Encoding* detail) const {
  std::span<const uint32_t> known;
  if (!memo || w.bytes.empty()) {
    tokenize_word(w, ids, detail);
  } else if (memo->all.find(w.bytes, &known)) {
    ids.insert(ids.end(), known.begin(), known.end());
  } else {
    const size_t mark = ids.size();
    tokenize_word(w, ids, nullptr);
    memo->all.insert(w.bytes, std::span(ids).subspan(mark));
  }
  w.clear();
}

void WordPieceTokenizer::set_bert_added_tokens(std::vector<AddedToken> tokens) {
  std::vector<std::string> contents;
  normalized_added_holds_space_ = false;
  for (const AddedToken& t : tokens) {
    if (!t.normalized) continue;
    NormalizedString content(t.content, false);
    bert_normalize(content, config_.normalizer);
    contents.push_back(content.text());
    if (config_.normalizer.clean_text)
      for (size_t i = 0; i < t.content.size();)
        normalized_added_holds_space_ |= is_white_space(decode_utf8(t.content, i));
  }
  set_added_tokens(std::move(tokens), contents);
}

void WordPieceTokenizer::encode_segment(std::string_view full, size_t begin, size_t end,
                                        std::vector<uint32_t>& ids, Encoding* detail) const {
  if (config_.normalizer.any() && !normalized_added().empty()) {
    encode_normalized(full, begin, end, ids, detail);
    return;
  }
  encode_fused(full, begin, end, ids, detail);
}

// encode_fused normalizes again what it is given: that leaves BertNormalizer's output as it is
// (each character's normalization is normalized; the spaces around ideographs only end words),
// as bert_added_test checks against HF on every scalar value. Its offsets, in the normalized
// text, are mapped back to the original.
void WordPieceTokenizer::encode_normalized(std::string_view full, size_t begin, size_t end,
                                           std::vector<uint32_t>& ids, Encoding* detail) const {
  NormalizedString s(full.substr(begin, end - begin), detail != nullptr);
  bert_normalize(s, config_.normalizer);
  auto original = [&](size_t b, size_t e) {
    const Span o = s.original_span(b, e);
    return std::pair<uint32_t, uint32_t>{static_cast<uint32_t>(begin + o.first),
                                         static_cast<uint32_t>(begin + o.second)};
  };
  normalized_added().split(s.text(), [&](bool is_token, size_t b, size_t e, uint32_t id) {
    if (is_token) {
      ids.push_back(id);
      if (detail) {
        detail->offsets.push_back(original(b, e));
        detail->word_ids.push_back(detail->word_ids.empty() ? 0 : detail->word_ids.back() + 1);
      }
      return;
    }
    const size_t mark = detail ? detail->offsets.size() : 0;
    encode_fused(s.text(), b, e, ids, detail);
    if (detail)
      for (size_t k = mark; k < detail->offsets.size(); ++k)
        detail->offsets[k] = original(detail->offsets[k].first, detail->offsets[k].second);
  });
}

void WordPieceTokenizer::encode_fused(std::string_view full, size_t begin, size_t end,
                                      std::vector<uint32_t>& ids, Encoding* detail) const {
  WordState& w = thread_word_state();
  w.clear();
  w.track = detail != nullptr;
  Memo* memo = detail ? nullptr : &thread_cache<Memo>(cache_owner_);
  const auto* s = reinterpret_cast<const unsigned char*>(full.data());
  size_t i = begin;
  while (i < end) {
    unsigned char c = s[i];
    if (c < 0x80) {
      // A window where ASCII text goes on: not where a few ASCII bytes stand between
      // non-ASCII words (Korean and Chinese text), which cost a window's masks for little.
      if (memo && w.bytes.empty() && end - i >= 16 && english16(s + i)) {
        if (const size_t j = ascii_window(s, i, end, *memo, w, ids); j > i) {
          i = j;
          continue;
        }
      }
      switch (ascii_class_[c]) {
        case kWordChar:
          if (memo && w.bytes.empty()) {
            if (const size_t j = ascii_word(s, i, end, *memo, w, ids); j > i) {
              i = j;
              continue;
            }
          }
          w.bytes.push_back(ascii_map_[c]);
          if (w.track) {
            w.start.push_back(static_cast<uint32_t>(i));
            w.end.push_back(static_cast<uint32_t>(i + 1));
          }
          ++w.chars;
          break;
        case kSpace:
          if (w.bytes.empty()) break;  // mostly: the word before it came from the hot table
          end_word(memo, w, ids, detail);
          break;
        case kPunct:
          if (!w.bytes.empty()) {
            end_word(memo, w, ids, detail);
          }
          if (memo) {
            ids.push_back(punct_id_[c]);
            break;
          }
          w.bytes.push_back(static_cast<char>(c));
          if (w.track) {
            w.start.push_back(static_cast<uint32_t>(i));
            w.end.push_back(static_cast<uint32_t>(i + 1));
          }
          w.chars = 1;
          end_word(memo, w, ids, detail);
          break;
        default:
          break;
      }
      ++i;
      continue;
    }
    // The text was validated: decode without checks.
    const size_t cs = i;
    const char32_t cp = decode_valid_utf8(s + i, utf8_length(c));
    i += utf8_length(c);
    const CharEntry* entry = cp < 0x10000 ? &bmp_[cp] : nullptr;
    if (!entry || entry->kind == CharEntry::kSlow) {
      add_codepoint(w, cp, static_cast<uint32_t>(cs), static_cast<uint32_t>(i), ids, detail);
      continue;
    }
    switch (entry->kind) {
      case CharEntry::kDrop:
        break;
      case CharEntry::kBreak:
        end_word(memo, w, ids, detail);
        break;
      case CharEntry::kIsolate:
        if (memo) {  // ids only: the character's id is known (a dash, a quote, a CJK character)
          if (!w.bytes.empty()) {
            end_word(memo, w, ids, detail);
          }
          ids.push_back(entry->isolated_id);
          break;
        }
        [[fallthrough]];
      case CharEntry::kAppend:
        if (entry->kind == CharEntry::kIsolate) {
          end_word(memo, w, ids, detail);
        }
        w.bytes.append(entry->utf8, entry->len);
        if (w.track) {
          w.start.resize(w.bytes.size(), static_cast<uint32_t>(cs));
          w.end.resize(w.bytes.size(), static_cast<uint32_t>(i));
        }
        w.chars += entry->chars;
        if (entry->kind == CharEntry::kIsolate) {
          end_word(memo, w, ids, detail);
        }
        break;
      default:
        break;
    }
  }
  end_word(memo, w, ids, detail);
}

namespace {

void replace_all(std::string& s, std::string_view from, std::string_view to) {
  size_t pos = 0;
  while ((pos = s.find(from, pos)) != std::string::npos) {
    s.replace(pos, from.size(), to);
    pos += to.size();
  }
}

}  // namespace

// HF decoders::wordpiece::WordPiece::decode_chain, then concatenation.
std::string WordPieceTokenizer::decode_tokens(const std::vector<std::string>& tokens) const {
  std::string out;
  if (!config_.has_decoder) {
    for (size_t i = 0; i < tokens.size(); ++i) {
      if (i) out.push_back(' ');
      out += tokens[i];
    }
    return out;
  }
  const std::string& prefix = config_.decoder_prefix;
  for (size_t i = 0; i < tokens.size(); ++i) {
    std::string t = tokens[i];
    if (i != 0) {
      if (!prefix.empty() && t.compare(0, prefix.size(), prefix) == 0) {
        t.erase(0, prefix.size());
      } else {
        t.insert(t.begin(), ' ');
      }
    }
    if (config_.decoder_cleanup) {
      replace_all(t, " .", ".");
      replace_all(t, " ?", "?");
      replace_all(t, " !", "!");
      replace_all(t, " ,", ",");
      replace_all(t, " ' ", "'");
      replace_all(t, " n't", "n't");
      replace_all(t, " 'm", "'m");
      replace_all(t, " do not", " don't");
      replace_all(t, " 's", "'s");
      replace_all(t, " 've", "'ve");
      replace_all(t, " 're", "'re");
    }
    out += t;
  }
  return out;
}

std::optional<uint32_t> WordPieceTokenizer::model_token_to_id(std::string_view token) const {
  uint32_t id = whole_.find(token);
  if (id == StringIdMap::kNone) return std::nullopt;
  return id;
}

std::optional<std::string> WordPieceTokenizer::model_id_to_token(uint32_t id) const {
  if (id >= config_.vocab.size()) return std::nullopt;
  return config_.vocab[id];
}

}  // namespace shardkit::tok
