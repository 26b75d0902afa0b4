#include "tokenizer/bpe.h"

#include <algorithm>
#include <queue>

#include "core/error.h"
#include "tokenizer/ascii_masks.h"
#include "tokenizer/blob.h"
#include "tokenizer/byte_key_cache.h"
#include "tokenizer/merge_table.h"
#include "tokenizer/piece_scanner.h"
#include "tokenizer/unicode.h"

namespace shardkit::tok {

namespace {

constexpr uint32_t kNoId = 0xFFFFFFFFu;

// Words longer than this are merged afresh each time: they are rare, and would crowd the cache.
constexpr size_t kMaxCachedWordBytes = 128;

// The patterns whose matches cover the whole text (they match at every position): a Split on
// one of them, Isolated, leaves exactly its matches as the pieces.
bool matches_everywhere(SplitMatcher m) {
  return m == gpt2_match || m == cl100k_match || m == qwen_match || m == o200k_match ||
         m == tekken_match;
}

}  // namespace

BpeTokenizer::BpeTokenizer(BpeConfig config, const std::string& source)
    : config_(std::move(config)), cache_owner_(new_cache_owner()) {
  if (!config_.compiled.empty()) {
    if (!restore_tables(config_.compiled.bytes))
      throw Error(ErrorCode::kCorrupt, source, "the compiled tokenizer tables are damaged");
    tables_owner_ = config_.compiled.owner;
  } else {
    build_tables(source);
  }
  config_.compiled = {};
  // HF inserts vocabulary entries in map order; with duplicate strings the last id wins in
  // token_to_id. Rare enough to ignore; ids come from the explicit vocab object anyway.
  for (int b = 0; b < 256; ++b) {
    char c = static_cast<char>(b);
    byte_id_[b] = by_bytes_.find(&c, 1);
  }
  if (config_.unk_token) {
    for (size_t id = 0; id < tokens_.size() && !unk_id_; ++id)
      if (tokens_[id] == *config_.unk_token) unk_id_ = static_cast<uint32_t>(id);
  }
  // A byte without a token leaves no symbol for its character. (Under ignore_merges a piece that
  // is a token is looked up before it is cut; the parts of one that is not merge as it does.)
  merges_by_parts_ =
      std::none_of(byte_id_.begin(), byte_id_.end(), [](uint32_t id) { return id == kNoId; });
  if (config_.steps.empty() || config_.steps.back().kind != PreTokenizerStep::kByteLevel)
    throw Error(ErrorCode::kUnsupported, source,
                "byte-level BPE needs a ByteLevel pre-tokenizer as the last step");
  words_matcher_ = pieces_matcher();
  words_pattern_ = piece_pattern(words_matcher_);
  deepseek_splits_ = has_deepseek_splits();
  cuts_after_newlines_ = steps_keep_newline_cuts() &&
                         (!config_.normalizer || config_.normalizer->keeps_newline_cuts());
  for (const PreTokenizerStep& st : config_.steps)
    if (st.matcher == o200k_match || st.matcher == tekken_match) refuse_cuts_before('/');
}

// The tables from the vocabulary and merges of the file.
void BpeTokenizer::build_tables(const std::string& source) {
  tokens_ = StringList(config_.vocab);
  config_.vocab = {};
  std::vector<uint32_t> mapped;  // ids whose token is made of stand-in characters
  mapped.reserve(tokens_.size());
  std::string bytes;
  for (size_t id = 0; id < tokens_.size(); ++id) {
    if (!tokens_[id].empty() && unmap_byte_level(tokens_[id], bytes)) {
      token_bytes_.push_back(bytes);
      mapped.push_back(static_cast<uint32_t>(id));
    } else {
      token_bytes_.push_back(tokens_[id]);
    }
  }
  by_bytes_.set_each(
      mapped.size(), [&](size_t i) { return std::string_view(token_bytes_[mapped[i]]); },
      [&](size_t i) { return mapped[i]; });
  // The merges' tokens as bytes; one that is not made of stand-in characters stays empty, which
  // no token is, so that it is reported missing.
  const auto& m = config_.merges;
  StringList left, right, merged;
  for (auto* list : {&left, &right, &merged}) list->reserve(m.size(), 8 * m.size());
  std::string a_bytes, b_bytes;
  for (const auto& [a, b] : m) {
    const bool ok = unmap_byte_level(a, a_bytes) && unmap_byte_level(b, b_bytes);
    if (!ok) a_bytes.clear(), b_bytes.clear();
    left.push_back(a_bytes);
    right.push_back(b_bytes);
    merged.push_back(a_bytes, b_bytes);
  }
  build_merge_table(
      by_bytes_, m.size(), left, right, merged,
      [&](size_t i) { return m[i].first + " " + m[i].second; }, source, merges_);
  joined_pairs_.build(token_bytes_, JoinedCharPairs::Symbols::kBytes);
  config_.merges.clear();
  config_.merges.shrink_to_fit();
}

std::string BpeTokenizer::compiled_model() const {
  std::string out;
  BlobWriter w(out);
  tokens_.save(w);
  token_bytes_.save(w);
  by_bytes_.save(w);
  merges_.save(w);
  joined_pairs_.save(w);
  return out;
}

bool BpeTokenizer::restore_tables(std::string_view blob) {
  BlobReader r(blob);
  if (!tokens_.load(r) || !token_bytes_.load(r) || token_bytes_.size() != tokens_.size())
    return false;
  if (!by_bytes_.load(r) || !merges_.load(r) || !joined_pairs_.restore(r) || !r.at_end())
    return false;
  // Every id the tables hand out must name a token.
  const size_t n = tokens_.size();
  return by_bytes_.all_ids_below(n) &&
         merges_.all_values([&](uint64_t v) { return static_cast<uint32_t>(v) < n; });
}

// The one pattern whose matches are the final pieces, when the steps come down to that: GPT-2's
// ByteLevel regex alone, or one Split on a pattern that matches everywhere, keeping its matches,
// before a ByteLevel without regex or virtual space. Null: the steps run one by one.
SplitMatcher BpeTokenizer::pieces_matcher() const {
  const auto& steps = config_.steps;
  if (steps.size() == 1 && steps[0].use_regex && !steps[0].add_prefix_space) return gpt2_match;
  if (steps.size() != 2 || steps[1].use_regex || steps[1].add_prefix_space) return nullptr;
  const PreTokenizerStep& split = steps[0];
  const bool keeps_matches = split.invert ? split.behavior == SplitBehavior::kRemoved
                                          : split.behavior == SplitBehavior::kIsolated;
  return keeps_matches && matches_everywhere(split.matcher) ? split.matcher : nullptr;
}

// DeepSeek-V3's pre-tokenizer: its three Splits, each Isolated, before a ByteLevel without regex
// or virtual space.
bool BpeTokenizer::has_deepseek_splits() const {
  const auto& steps = config_.steps;
  if (steps.size() != 4 || steps[3].use_regex || steps[3].add_prefix_space) return false;
  const SplitMatcher matchers[3] = {deepseek_digits_match, deepseek_cjk_match,
                                    deepseek_words_match};
  for (int k = 0; k < 3; ++k)
    if (steps[k].kind != PreTokenizerStep::kSplit || steps[k].matcher != matchers[k] ||
        steps[k].invert || steps[k].behavior != SplitBehavior::kIsolated)
      return false;
  return true;
}

// The hand-matched patterns end a piece at a newline between two non-space characters, and
// Isolated keeps their pieces as they are (text_cuts.h). When nothing splits before ByteLevel,
// its virtual space goes before the whole text, and without its regex the text is one word.
bool BpeTokenizer::steps_keep_newline_cuts() const {
  bool split = false;
  for (const PreTokenizerStep& st : config_.steps) {
    if (st.kind == PreTokenizerStep::kSplit) {
      // The matches kept as pieces: Isolated, or the gaps Removed with invert (GPT-4o's file).
      const bool keeps_matches = st.invert ? st.behavior == SplitBehavior::kRemoved
                                           : st.behavior == SplitBehavior::kIsolated;
      if (!st.matcher || !keeps_matches) return false;
      split = true;
    } else if (!split && (st.add_prefix_space || !st.use_regex)) {
      return false;
    }
  }
  return true;
}

BpeTokenizer::~BpeTokenizer() = default;

// Applies merges lowest rank first, leftmost first among equal ranks: the order HF's priority
// queue (rank, position) produces.
void BpeTokenizer::merge_symbols(const char* p, size_t n, std::vector<uint32_t>& out) const {
  thread_local std::vector<uint32_t> sym;
  sym.clear();
  for (size_t i = 0; i < n; ++i) {
    uint32_t id = byte_id_[static_cast<unsigned char>(p[i])];
    if (id == kNoId) {
      if (unk_id_) sym.push_back(*unk_id_);
      continue;
    }
    sym.push_back(id);
  }
  if (sym.size() <= 48) {
    // pair[i] = (rank << 32 | merged id) of sym[i], sym[i + 1]; only neighbours of a merge
    // change, so each merge costs two lookups plus a scan of this small array.
    thread_local std::vector<uint64_t> pair;
    const size_t m = sym.size();
    pair.resize(m);
    for (size_t i = 0; i + 1 < m; ++i)
      pair[i] = merges_.find((uint64_t{sym[i]} << 32) | sym[i + 1]);
    size_t len = m;
    while (len > 1) {
      uint64_t best = U64Map::kEmpty;
      size_t best_i = 0;
      for (size_t i = 0; i + 1 < len; ++i) {
        if (pair[i] < best) {  // rank in the high bits: smaller wins, ties keep the leftmost
          best = pair[i];
          best_i = i;
        }
      }
      if (best == U64Map::kEmpty) break;
      sym[best_i] = static_cast<uint32_t>(best);
      for (size_t i = best_i + 1; i + 1 < len; ++i) {
        sym[i] = sym[i + 1];
        pair[i] = pair[i + 1];
      }
      --len;
      if (best_i > 0)
        pair[best_i - 1] = merges_.find((uint64_t{sym[best_i - 1]} << 32) | sym[best_i]);
      if (best_i + 1 < len)
        pair[best_i] = merges_.find((uint64_t{sym[best_i]} << 32) | sym[best_i + 1]);
    }
    out.insert(out.end(), sym.begin(), sym.begin() + static_cast<ptrdiff_t>(len));
    return;
  }
  // Long words: a heap of candidate merges over a linked list of symbols.
  const size_t m = sym.size();
  std::vector<int32_t> prev(m), next(m);
  std::vector<uint8_t> alive(m, 1);
  for (size_t i = 0; i < m; ++i) {
    prev[i] = static_cast<int32_t>(i) - 1;
    next[i] = i + 1 < m ? static_cast<int32_t>(i + 1) : -1;
  }
  using Item = std::pair<uint64_t, uint32_t>;  // (rank << 32 | merged id, position)
  std::priority_queue<Item, std::vector<Item>, std::greater<Item>> heap;
  auto push = [&](int32_t i) {
    if (i < 0 || next[i] < 0) return;
    uint64_t v = merges_.find((uint64_t{sym[i]} << 32) | sym[next[i]]);
    if (v != U64Map::kEmpty) heap.emplace(v, static_cast<uint32_t>(i));
  };
  for (size_t i = 0; i + 1 < m; ++i) push(static_cast<int32_t>(i));
  while (!heap.empty()) {
    auto [v, pos] = heap.top();
    heap.pop();
    if (!alive[pos] || next[pos] < 0) continue;
    int32_t r = next[pos];
    uint64_t cur = merges_.find((uint64_t{sym[pos]} << 32) | sym[r]);
    if (cur != v) continue;  // stale entry
    sym[pos] = static_cast<uint32_t>(v);
    alive[r] = 0;
    next[pos] = next[r];
    if (next[r] >= 0) prev[next[r]] = static_cast<int32_t>(pos);
    push(prev[pos]);
    push(static_cast<int32_t>(pos));
  }
  for (int32_t i = 0; i >= 0; i = next[i]) out.push_back(sym[i]);
}

void BpeTokenizer::bpe_word(const char* p, size_t n, std::vector<uint32_t>& out) const {
  bpe_word(thread_cache<Memo>(cache_owner_).all, p, n, out);
}

void BpeTokenizer::bpe_word(ByteKeyCache<uint32_t>& cache, const char* p, size_t n,
                            std::vector<uint32_t>& out) const {
  if (n == 0) return;
  if (config_.ignore_merges) {
    uint32_t id = by_bytes_.find(p, n);
    if (id != kNoId) {
      out.push_back(id);
      return;
    }
  }
  if (n == 1) {
    uint32_t id = byte_id_[static_cast<unsigned char>(p[0])];
    if (id != kNoId) {
      out.push_back(id);
    } else if (unk_id_) {
      out.push_back(*unk_id_);
    }
    return;
  }
  through_cache(cache, p, n, out, [&] { merge_by_parts(cache, p, n, out); });
}

// Appends what `make()` appends for p[0, n), from `cache` when it holds it (a word too long to
// cache is made each time).
template <typename Make>
void BpeTokenizer::through_cache(ByteKeyCache<uint32_t>& cache, const char* p, size_t n,
                                 std::vector<uint32_t>& out, Make&& make) {
  if (n > kMaxCachedWordBytes) return make();
  const std::string_view word(p, n);
  std::span<const uint32_t> hit;
  if (cache.find(word, &hit)) {
    out.insert(out.end(), hit.begin(), hit.end());
    return;
  }
  const size_t mark = out.size();
  make();
  cache.insert(word, std::span(out).subspan(mark));
}

// A piece cut between two characters that no merge joins (JoinedCharPairs) merges part by part
// into its own tokens. A piece of Chinese is a whole sentence (the patterns take a run of
// letters), and its parts are words, which the memo holds.
void BpeTokenizer::merge_by_parts(ByteKeyCache<uint32_t>& cache, const char* p, size_t n,
                                  std::vector<uint32_t>& out) const {
  // An ASCII piece is a word, a number or a run of punctuation, which nearly every vocabulary
  // joins throughout: not worth a look at each character of each new English word.
  const auto* c = reinterpret_cast<const unsigned char*>(p);
  if (!merges_by_parts_ || ascii_prefix(c, n) == n) return merge_symbols(p, n, out);
  size_t start = 0, i = std::min(utf8_length(c[0]), n);
  char32_t prev = decode_valid_utf8(c, i);
  while (i < n) {
    const size_t length = std::min(utf8_length(c[i]), n - i);
    const char32_t cp = decode_valid_utf8(c + i, length);
    if (!joined_pairs_.joins(prev, cp)) {
      merge_part(cache, p + start, i - start, out);
      start = i;
    }
    prev = cp;
    i += length;
  }
  if (start == 0) return merge_symbols(p, n, out);
  merge_part(cache, p + start, n - start, out);
}

void BpeTokenizer::merge_part(ByteKeyCache<uint32_t>& cache, const char* p, size_t n,
                              std::vector<uint32_t>& out) const {
  if (n == 1) {
    out.push_back(byte_id_[static_cast<unsigned char>(p[0])]);
    return;
  }
  through_cache(cache, p, n, out, [&] { merge_symbols(p, n, out); });
}

void BpeTokenizer::emit_piece(std::string_view full, const Piece& piece, std::vector<uint32_t>& ids,
                              Encoding* detail) const {
  auto* offsets = detail ? &detail->offsets : nullptr;
  const char* p = full.data() + piece.begin;
  size_t n = piece.end - piece.begin;
  thread_local std::string tmp;
  if (piece.prefix) {
    tmp.assign(1, ' ');
    tmp.append(p, n);
    p = tmp.data();
    n = tmp.size();
  }
  const size_t mark = ids.size();
  bpe_word(p, n, ids);
  if (!offsets) return;
  const uint32_t word_id = detail->word_ids.empty() ? 0 : detail->word_ids.back() + 1;
  detail->word_ids.resize(detail->word_ids.size() + (ids.size() - mark), word_id);
  // Byte position inside the piece -> original byte; the virtual space maps to the first
  // character, as HF aligns a prepended character.
  const auto* s = reinterpret_cast<const unsigned char*>(full.data());
  auto char_start = [&](size_t x) {
    while (x > 0 && (s[x] & 0xC0) == 0x80) --x;
    return x;
  };
  auto char_end = [&](size_t x) {  // x = position of a byte; returns end of its character
    ++x;
    while (x < full.size() && (s[x] & 0xC0) == 0x80) ++x;
    return x;
  };
  size_t pos = 0;
  for (size_t k = mark; k < ids.size(); ++k) {
    size_t len = ids[k] < token_bytes_.size() ? token_bytes_[ids[k]].size() : 1;
    if (len == 0) len = 1;
    size_t a = pos, b = std::min(pos + len, n);
    pos = b;
    size_t oa, ob_byte;
    if (piece.prefix) {
      oa = piece.begin + (a == 0 ? 0 : a - 1);
      ob_byte = piece.begin + (b - 1 == 0 ? 0 : b - 2);
    } else {
      oa = piece.begin + a;
      ob_byte = piece.begin + b - 1;
    }
    if (piece.begin == piece.end) {
      // A lone virtual space is aligned with the character it was prepended to.
      size_t e = piece.begin < full.size() ? char_end(piece.begin) : piece.begin;
      offsets->emplace_back(static_cast<uint32_t>(piece.begin), static_cast<uint32_t>(e));
      continue;
    }
    offsets->emplace_back(static_cast<uint32_t>(char_start(oa)),
                          static_cast<uint32_t>(char_end(ob_byte)));
  }
}

template <typename Emit>
void BpeTokenizer::split_from(std::string_view full, size_t step, const Piece& pc,
                              Emit& emit) const {
  if (step == config_.steps.size()) {
    emit(pc);
    return;
  }
  const PreTokenizerStep& st = config_.steps[step];
  if (st.kind == PreTokenizerStep::kSplit) {
    const std::string_view text = full.substr(pc.begin, pc.end - pc.begin);
    auto next = [&](Span r) {
      if (r.second > r.first)
        split_from(full, step + 1, {pc.begin + r.first, pc.begin + r.second, false}, emit);
    };
    SplitRanges ranges(st.behavior, next);
    for_each_match_range(
        text,
        [&](size_t from, size_t* mb, size_t* me) {
          if (!st.matcher) return st.regex->search(text, from, text.size(), mb, me);
          for (size_t at = from; at < text.size();
               at += utf8_length(static_cast<unsigned char>(text[at])))
            if (const size_t end = st.matcher(text, at); end != kNoMatch) {
              *mb = at;
              *me = end;
              return true;
            }
          return false;
        },
        [&](Span r, bool is_match) { ranges.push(r, is_match != st.invert); });
    ranges.finish();
    return;
  }
  // ByteLevel.
  const bool prefix = st.add_prefix_space && (pc.begin == pc.end || full[pc.begin] != ' ');
  if (!st.use_regex) {
    split_from(full, step + 1, {pc.begin, pc.end, prefix}, emit);
    return;
  }
  std::string_view text = full.substr(pc.begin, pc.end - pc.begin);
  std::string spaced;  // only for a piece that gets a virtual space
  if (prefix) {
    spaced.reserve(text.size() + 1);
    spaced.assign(1, ' ');
    spaced.append(text);
    text = spaced;
  }
  for (size_t pos = 0; pos < text.size();) {
    const size_t e = gpt2_match(text, pos);
    if (!prefix) {
      split_from(
          full, step + 1,
          {static_cast<uint32_t>(pc.begin + pos), static_cast<uint32_t>(pc.begin + e), false},
          emit);
    } else if (pos == 0) {
      split_from(full, step + 1, {pc.begin, static_cast<uint32_t>(pc.begin + e - 1), true}, emit);
    } else {
      split_from(full, step + 1,
                 {static_cast<uint32_t>(pc.begin + pos - 1),
                  static_cast<uint32_t>(pc.begin + e - 1), false},
                 emit);
    }
    pos = e;
  }
}

void BpeTokenizer::encode_segment(std::string_view full, size_t begin, size_t end,
                                  std::vector<uint32_t>& ids, Encoding* detail) const {
  // A segment the normalizer leaves alone (English through NFC, with its curly quotes and
  // dashes) skips the copy.
  if (!config_.normalizer ||
      config_.normalizer->leaves_unchanged(full.substr(begin, end - begin))) {
    encode_normalized(full, begin, end, ids, detail);
    return;
  }
  // Tokenize the normalized text, then map its offsets back to the original bytes.
  NormalizedString s(full.substr(begin, end - begin), detail != nullptr);
  config_.normalizer->apply(s);
  const size_t mark = detail ? detail->offsets.size() : 0;
  encode_normalized(s.text(), 0, s.text().size(), ids, detail);
  if (!detail) return;
  for (size_t k = mark; k < detail->offsets.size(); ++k) {
    auto& o = detail->offsets[k];
    Span orig = s.original_span(o.first, o.second);
    o = {static_cast<uint32_t>(begin + orig.first), static_cast<uint32_t>(begin + orig.second)};
  }
}

// The pieces of one pattern, each looked up in the thread's hot table of short words, then in
// its map of all words, and merged only when both miss. Ids only.
void BpeTokenizer::encode_words(std::string_view full, size_t begin, size_t end,
                                std::vector<uint32_t>& ids) const {
  const std::string_view text = full.substr(0, end);
  const auto scan = [&]<PiecePattern kPattern>() {
    PieceScanner<kPattern> scanner(text);
    encode_words(full, text, begin, ids,
                 [&](size_t pos, size_t* ends) { return scanner.next_pieces(pos, ends); });
  };
  if (!words_pattern_) {
    encode_words(full, text, begin, ids, [&](size_t pos, size_t* ends) {
      ends[0] = words_matcher_(text, pos);
      return size_t{1};
    });
    return;
  }
  using P = PiecePattern;
  switch (*words_pattern_) {
    case P::kGpt2:
      return scan.template operator()<P::kGpt2>();
    case P::kCl100k:
      return scan.template operator()<P::kCl100k>();
    case P::kQwen:
      return scan.template operator()<P::kQwen>();
    case P::kO200k:
      return scan.template operator()<P::kO200k>();
    case P::kTekken:
      return scan.template operator()<P::kTekken>();
  }
}

template <typename NextPieces>
void BpeTokenizer::encode_words(std::string_view full, std::string_view text, size_t begin,
                                std::vector<uint32_t>& ids, NextPieces&& next_pieces) const {
  Memo& memo = thread_cache<Memo>(cache_owner_);
  const size_t end = text.size();
  reserve_more(ids, end - begin);  // a piece never has more ids than bytes
  const char* limit = full.data() + full.size();
  size_t ends[64];
  Staged staged;
  for (size_t pos = begin; pos < end;) {
    const size_t count = next_pieces(pos, ends);
    for (size_t k = 0; k < count; ++k) {
      encode_word(memo, text.data() + pos, ends[k] - pos, limit, staged, ids);
      pos = ends[k];
    }
  }
  staged.flush(ids);
}

// One piece's ids: a byte's own id or the hot table's, staged; else the map's or the merges',
// appended to `ids` after what is staged.
[[gnu::always_inline]] inline void BpeTokenizer::encode_word(Memo& memo, const char* p, size_t n,
                                                             const char* limit, Staged& staged,
                                                             std::vector<uint32_t>& ids) const {
  using Hot = Memo::Hot;
  staged.make_room(Hot::kSlotValues, ids);
  if (n == 1 && byte_id_[static_cast<unsigned char>(*p)] != kNoId) {
    staged.ids[staged.size++] = byte_id_[static_cast<unsigned char>(*p)];
    return;
  }
  if (n > Hot::kMaxKeyBytes) {
    staged.flush(ids);
    bpe_word(memo.all, p, n, ids);
    return;
  }
  const Hot::Key key = Hot::key(p, n, limit);
  if (const size_t found = memo.hot.copy_to(key, staged.ids + staged.size)) {
    staged.size += found;
    return;
  }
  staged.flush(ids);
  const size_t mark = ids.size();
  bpe_word(memo.all, p, n, ids);
  memo.hot.insert(key, std::span(ids).subspan(mark));
}

void BpeTokenizer::encode_normalized(std::string_view full, size_t begin, size_t end,
                                     std::vector<uint32_t>& ids, Encoding* detail) const {
  if (words_matcher_ && !detail) {
    encode_words(full, begin, end, ids);
    return;
  }
  if (deepseek_splits_ && !detail) {
    // The three Splits as one scan, and the pieces through the word memo's hot table.
    const std::string_view text = full.substr(0, end);
    size_t outer_end = 0;
    encode_words(full, text, begin, ids, [&](size_t pos, size_t* ends) {
      ends[0] = deepseek_piece_end(text, pos, &outer_end);
      return size_t{1};
    });
    return;
  }
  if (words_matcher_ == gpt2_match) {
    std::string_view text = full.substr(0, end);
    for (size_t pos = begin; pos < end;) {
      const size_t e = gpt2_match(text, pos);
      emit_piece(full, {static_cast<uint32_t>(pos), static_cast<uint32_t>(e), false}, ids, detail);
      pos = e;
    }
    return;
  }
  // Depth first, each piece tokenized as soon as the last step yields it: a whole document
  // needs no list of its pieces.
  auto emit = [&](const Piece& pc) { emit_piece(full, pc, ids, detail); };
  split_from(full, 0, {static_cast<uint32_t>(begin), static_cast<uint32_t>(end), false}, emit);
}

namespace {

// Rust's String::from_utf8_lossy: each maximal invalid subpart becomes one U+FFFD.
std::string utf8_lossy(const std::string& bytes) {
  std::string out;
  const auto* s = reinterpret_cast<const unsigned char*>(bytes.data());
  const size_t n = bytes.size();
  size_t i = 0;
  while (i < n) {
    unsigned char c = s[i];
    if (c < 0x80) {
      out.push_back(static_cast<char>(c));
      ++i;
      continue;
    }
    size_t len = 0;
    unsigned char lo = 0x80, hi = 0xBF;
    if (c >= 0xC2 && c <= 0xDF) {
      len = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
      len = 3;
      if (c == 0xE0) lo = 0xA0;
      if (c == 0xED) hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      len = 4;
      if (c == 0xF0) lo = 0x90;
      if (c == 0xF4) hi = 0x8F;
    }
    if (len == 0) {
      out += "\xEF\xBF\xBD";
      ++i;
      continue;
    }
    size_t k = 1;
    while (k < len && i + k < n) {
      unsigned char cc = s[i + k];
      unsigned char l = k == 1 ? lo : 0x80, h = k == 1 ? hi : 0xBF;
      if (cc < l || cc > h) break;
      ++k;
    }
    if (k == len) {
      out.append(bytes, i, len);
    } else {
      out += "\xEF\xBF\xBD";
    }
    i += k;
  }
  return out;
}

}  // namespace

std::string BpeTokenizer::decode_tokens(const std::vector<std::string>& tokens) const {
  if (!config_.byte_level_decoder) {
    std::string out;
    for (size_t i = 0; i < tokens.size(); ++i) {
      if (i) out.push_back(' ');
      out += tokens[i];
    }
    return out;
  }
  std::string bytes, b;
  for (const std::string& t : tokens) {
    if (unmap_byte_level(t, b)) {
      bytes += b;
    } else {
      bytes += t;
    }
  }
  return utf8_lossy(bytes);
}

std::optional<uint32_t> BpeTokenizer::model_token_to_id(std::string_view token) const {
  std::string bytes;
  if (!unmap_byte_level(token, bytes)) return std::nullopt;
  uint32_t id = by_bytes_.find(bytes);
  if (id == kNoId) return std::nullopt;
  return id;
}

std::optional<std::string> BpeTokenizer::model_id_to_token(uint32_t id) const {
  if (id >= tokens_.size() || tokens_[id].empty()) return std::nullopt;
  return std::string(tokens_[id]);
}

// HF processors::byte_level::process_offsets.
void BpeTokenizer::finish_encoding(Encoding& e) const {
  if (!post().byte_level_trim && !post().roberta_trim) return;
  const bool add_prefix_space =
      post().roberta_trim ? post().roberta_add_prefix_space : post().byte_level_add_prefix_space;
  for (size_t i = 0; i < e.size(); ++i) {
    uint32_t id = e.ids[i];
    const std::string_view bytes = id < token_bytes_.size() ? token_bytes_[id] : "";
    size_t leading = 0, trailing = 0;
    while (leading < bytes.size() && bytes[leading] == ' ') ++leading;
    while (trailing < bytes.size() && bytes[bytes.size() - 1 - trailing] == ' ') ++trailing;
    auto& off = e.offsets[i];
    if (leading == 0 && trailing == 0) continue;
    if (leading > 0) {
      bool is_first = i == 0 || off.first == 0;
      if (is_first && add_prefix_space && leading == 1) leading = 0;
      off.first = std::min<uint32_t>(off.first + static_cast<uint32_t>(leading), off.second);
    }
    if (trailing > 0 && off.second >= trailing)
      off.second = std::max<uint32_t>(off.second - static_cast<uint32_t>(trailing), off.first);
  }
}

}  // namespace shardkit::tok
