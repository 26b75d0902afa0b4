// Unigram (SentencePiece's model): the best-scoring segmentation by Viterbi over a piece trie,
// exactly as HF's encode_optimized and SentencePiece's EncodeOptimized compute it: nodes visited
// by start position, a candidate replaces the best only when strictly better, an unknown single
// character costs min score - 10, and runs of unknown characters fuse.
#include <algorithm>
#include <cfloat>
#include <cstdio>
#include <memory>
#include <span>

#include "core/error.h"
#include "tokenizer/ascii_masks.h"
#include "tokenizer/byte_key_cache.h"
#include "tokenizer/double_array_trie.h"
#include "tokenizer/float_path_memo.h"
#include "tokenizer/models.h"
#include "tokenizer/unicode.h"

namespace shardkit::tok {

namespace {

constexpr uint32_t kNoId = 0xFFFFFFFFu;
constexpr double kUnkPenalty = 10.0;
// Words longer than this are tokenized afresh each time: they are rare, and would crowd the
// cache. A word's tokens carry offsets relative to the word.
constexpr size_t kMaxCachedWordBytes = 64;
// The lattice is cut at the first position no piece crosses after this many bytes.
constexpr size_t kSegmentBytes = 4096;
using WordCache = ByteKeyCache<ModelToken>;
// float_path_memo.h's entries: a bound, then the ids. Seven cells, so that words of up to six
// pieces (most words an 8,000-piece vocabulary splits) are served by the hot table.
using PathMemo = WordMemo<uint32_t, 7>;
using Hot = PathMemo::Hot;
struct WordIds : Hot {};  // an HF Unigram's short words and their ids (a thread_cache type)
constexpr std::string_view kSpace = kSentencePieceSpace;

class UnigramModel final : public Model {
 public:
  UnigramModel(UnigramConfig c, const std::string& source) : config_(std::move(c)) {
    const size_t n = config_.pieces.size();
    if (config_.scores.size() != n)
      throw Error(ErrorCode::kInput, source, "Unigram: every piece needs a score");
    spm_ = !config_.matchable.empty();
    min_score_ = DBL_MAX;
    double max_score = spm_ ? FLT_MIN : -DBL_MAX;  // SentencePiece starts its max at FLT_MIN
    for (uint32_t id = 0; id < n; ++id) {
      by_piece_.set(config_.pieces[id], id);
      bool counts = !spm_ || (config_.matchable[id] && !config_.user_defined[id]);
      if (counts) {
        min_score_ = std::min(min_score_, config_.scores[id]);
        max_score = std::max(max_score, config_.scores[id]);
      }
    }
    if (spm_) {
      // SentencePiece keeps float scores.
      min_score_ = static_cast<float>(min_score_);
      for (uint32_t id = 0; id < n; ++id)
        if (config_.user_defined[id]) config_.scores[id] = -0.1;  // replaced per length below
      max_score_ = static_cast<float>(max_score);
    }
    std::vector<std::pair<std::string_view, uint32_t>> keys;
    piece_score_.resize(n);
    piece_bytes_.resize(n);
    for (uint32_t id = 0; id < n; ++id) {
      // The score a match adds: SentencePiece's user-defined pieces score length * max - 0.1
      // (float product, double sum, as its code computes it).
      const size_t len = config_.pieces[id].size();
      piece_score_[id] =
          spm_ && config_.user_defined[id]
              ? static_cast<double>(static_cast<float>(len) * static_cast<float>(max_score_)) - 0.1
              : config_.scores[id];
      if (spm_ && !config_.matchable[id]) continue;
      if (by_piece_.find(config_.pieces[id]) != id) continue;  // duplicates: the last id wins
      keys.emplace_back(config_.pieces[id], id);
      piece_bytes_[id] = static_cast<uint32_t>(config_.pieces[id].size());
      if (config_.pieces[id].find(kSpace, 1) != std::string::npos) cut_at_spaces_ = false;
      max_piece_bytes_ = std::max(max_piece_bytes_, config_.pieces[id].size());
    }
    trie_.build(std::move(keys));
    if (config_.unk_id && *config_.unk_id >= n)
      throw Error(ErrorCode::kInput, source, "Unigram: unk_id is outside the vocabulary");
    byte_ids_.fill(kNoId);
    if (config_.byte_fallback) {
      char name[8];
      for (int b = 0; b < 256; ++b) {
        std::snprintf(name, sizeof name, "<0x%02X>", b);
        byte_ids_[b] = by_piece_.find(name);
      }
    }
  }

  void tokenize(std::string_view s, std::vector<ModelToken>& out) const override {
    tokenize_into(s, out);
  }
  void tokenize_ids(std::string_view s, const char* readable_end,
                    std::vector<uint32_t>& ids) const override {
    if (!spm_ && !s.empty() && s.size() <= Hot::kMaxKeyBytes) {
      short_word_ids(thread_cache<WordIds>(cache_owner_), s, readable_end, ids);
      return;
    }
    tokenize_into(s, ids);
  }

  void tokenize_pieces_ids(std::string_view text, size_t begin, std::span<const size_t> ends,
                           std::vector<uint32_t>& ids) const override {
    if (spm_) {
      Model::tokenize_pieces_ids(text, begin, ends, ids);
      return;
    }
    Hot& hot = thread_cache<WordIds>(cache_owner_);
    StagedIds<uint32_t, 64 * Hot::kSlotValues> staged;
    for (const size_t end : ends) {
      const std::string_view word = text.substr(begin, end - begin);
      begin = end;
      if (word.empty()) continue;
      if (word.size() > Hot::kMaxKeyBytes) {
        staged.flush(ids);
        tokenize_into(word, ids);
        continue;
      }
      const Hot::Key key = Hot::key(word.data(), word.size(), text.data() + text.size());
      if (staged.take_hit(hot, key, ids)) continue;
      staged.flush(ids);
      short_word_missed(hot, key, word, ids);
    }
    staged.flush(ids);
  }

  std::optional<uint32_t> token_to_id(std::string_view token) const override {
    uint32_t id = by_piece_.find(token);
    if (id == kNoId) return std::nullopt;
    return id;
  }
  std::optional<std::string> id_to_token(uint32_t id) const override {
    if (id >= config_.pieces.size()) return std::nullopt;
    return config_.pieces[id];
  }
  size_t size() const override { return config_.pieces.size(); }
  std::optional<uint32_t> unk_id() const override { return config_.unk_id; }

 private:
  // Out: std::vector<ModelToken> or the ids alone (append_token).
  template <typename Out>
  void tokenize_into(std::string_view s, Out& out) const {
    if (s.empty()) return;
    if (spm_) {
      if (cut_at_spaces_)
        by_words(s, out);
      else
        viterbi<float>(s, out);
      return;
    }
    if (s.size() > kMaxCachedWordBytes) {
      viterbi<double>(s, out);
      return;
    }
    auto& cache = thread_cache<WordCache>(cache_owner_);
    std::span<const ModelToken> hit;
    if (!cache.find(s, &hit)) {
      thread_local std::vector<ModelToken> word;
      word.clear();
      viterbi<double>(s, word);
      cache.insert(s, word);
      hit = word;
    }
    for (const ModelToken& t : hit) append_token(out, t);
  }

  // An HF word (its ids depend on it alone) of up to 16 bytes, through the thread's hot table
  // of short words, in front of the cache of all words.
  void short_word_ids(Hot& hot, std::string_view s, const char* readable_end,
                      std::vector<uint32_t>& ids) const {
    const Hot::Key key = Hot::key(s.data(), s.size(), readable_end);
    if (const std::span<const uint32_t> hit = hot.find(key); !hit.empty()) {
      ids.insert(ids.end(), hit.begin(), hit.end());
      return;
    }
    short_word_missed(hot, key, s, ids);
  }

  // A short word the hot table does not hold: from the cache of all words, then into the table.
  void short_word_missed(Hot& hot, const Hot::Key& key, std::string_view s,
                         std::vector<uint32_t>& ids) const {
    const size_t mark = ids.size();
    tokenize_into(s, ids);
    hot.insert(key, std::span(ids).subspan(mark));
  }

  template <typename Score>
  struct Node {
    uint32_t id;
    Score score;
    int64_t starts_at;  // absolute byte position; -1 while no path reaches this one
  };

  // A run of unknown characters, fused into one token when the model says so, held back until
  // it ends: byte fallback spells out the whole run.
  struct UnknownRun {
    bool open = false;
    ModelToken token{};
  };

  template <typename Score, typename Out>
  void viterbi(std::string_view s, Out& out) const {
    const auto* p = reinterpret_cast<const unsigned char*>(s.data());
    UnknownRun unknown;
    best_path<Score>(p, 0, s.size(), Score{0}, emitter(p, unknown, out), nullptr);
    flush_unknown(unknown, p, out);
  }

  // A SentencePiece line, a word at a time (words start at "▁", which no piece holds past its
  // first byte, so every path passes through a word's start). The line's float sums carry from
  // word to word as in one lattice; a word's remembered path is used while the start score is
  // within its bound (float_path_memo.h), and searched for afresh beyond it. Scores only grow
  // in magnitude along a line, so once a quarter of the words looked up were refused the rest of
  // the line is searched without the memo (a line of megabytes reaches scores of -1e7, where
  // nearly every word is refused and the lookup would be pure cost).
  template <typename Out>
  void by_words(std::string_view s, Out& out) const {
    auto& memo = thread_cache<PathMemo>(cache_owner_);
    const auto* p = reinterpret_cast<const unsigned char*>(s.data());
    UnknownRun unknown;
    const auto emit = emitter(p, unknown, out);
    float score = 0;
    size_t looked_up = 0, refused = 0;
    // The word after the current one is found first, and its hot-table set loaded while the
    // current word's path is replayed (5% on English: that load comes from the L3 cache).
    const auto word_end = [&](size_t begin) {
      return begin >= s.size() ? s.size() : std::min(s.size(), find_literal(s, begin + 1, kSpace));
    };
    size_t next_end = word_end(0);
    for (size_t begin = 0; begin < s.size();) {
      if (refused >= 32 && 4 * refused >= looked_up) {
        best_path<float>(p, begin, s.size(), score, emit, nullptr);
        break;
      }
      const size_t end = next_end;
      next_end = word_end(end);
      if (next_end > end && next_end - end <= Hot::kMaxKeyBytes)
        memo.hot.prefetch(Hot::key(s.data() + end, next_end - end, s.data() + s.size()));
      std::span<const uint32_t> path;
      if (worth_remembering(s.substr(begin, end - begin))) {
        path = remembered(memo, s, begin, end);
        ++looked_up;
        if (score != 0 && std::fabs(score) >= reuse_below(path)) {
          path = {};
          ++refused;
        }
      }
      if (!path.empty())
        score = replay(path.subspan(1), p, begin, score, emit);
      else
        score = best_path<float>(p, begin, end, score, emit, nullptr);
      begin = end;
    }
    flush_unknown(unknown, p, out);
  }

  // Short words of mostly ASCII text. A Korean or Chinese word's lattice (a few pieces a
  // character) costs less than the memo's lookup, which made those texts 8% slower.
  static bool worth_remembering(std::string_view word) {
    const size_t first = word.starts_with(kSpace) ? kSpace.size() : 0;
    return word.size() <= kMaxCachedWordBytes &&
           (word.size() == first || static_cast<unsigned char>(word[first]) < 0x80);
  }

  // The memo's entry for s[begin, end), searched for from a start score of 0 on first sight.
  std::span<const uint32_t> remembered(PathMemo& memo, std::string_view s, size_t begin,
                                       size_t end) const {
    const std::string_view word = s.substr(begin, end - begin);
    const bool hot = word.size() <= Hot::kMaxKeyBytes;
    Hot::Key key;
    if (hot) {
      key = Hot::key(word.data(), word.size(), s.data() + s.size());
      if (const std::span<const uint32_t> hit = memo.hot.find(key); !hit.empty()) return hit;
    }
    std::span<const uint32_t> entry;
    if (!memo.all.find(word, &entry)) entry = search_from_zero(memo, s, begin, end);
    if (hot) memo.hot.insert(key, entry);
    return entry;
  }

  std::span<const uint32_t> search_from_zero(PathMemo& memo, std::string_view s, size_t begin,
                                             size_t end) const {
    thread_local std::vector<uint32_t> entry;
    entry.assign(1, 0);
    Closeness closeness;
    const auto keep = [&](std::span<const ModelToken> tokens) {
      for (const ModelToken& t : tokens) entry.push_back(t.id);
    };
    best_path<float>(reinterpret_cast<const unsigned char*>(s.data()), begin, end, 0.0f, keep,
                     &closeness);
    entry[0] = bound_cell(reuse_bound(closeness, end - begin));
    memo.all.insert(s.substr(begin, end - begin), entry);
    return entry;
  }

  // Hands a remembered path at `begin` to `emit` and returns the score after it, each step summed
  // as best_path sums it.
  template <typename Emit>
  float replay(std::span<const uint32_t> ids, const unsigned char* p, size_t begin, float score,
               const Emit& emit) const {
    for (const uint32_t id : ids) {
      size_t bytes;
      if (config_.unk_id && id == *config_.unk_id) {
        score = static_cast<float>(min_score_ - kUnkPenalty) + score;
        bytes = utf8_length(p[begin]);
      } else {
        score = static_cast<float>(piece_score_[id] + static_cast<double>(score));
        bytes = piece_bytes_[id];
      }
      const ModelToken token{id, static_cast<uint32_t>(begin),
                             static_cast<uint32_t>(begin + bytes)};
      emit(std::span<const ModelToken>(&token, 1));
      begin += bytes;
    }
    return score;
  }

  // What takes a best path's tokens: the unknown runs fused, then `out`.
  template <typename Out>
  auto emitter(const unsigned char* p, UnknownRun& unknown, Out& out) const {
    return [this, p, &unknown, &out](std::span<const ModelToken> tokens) {
      for (const ModelToken& t : tokens) emit_token(t, p, unknown, out);
    };
  }

  // The lattice of p[from, to), from a path score of `start` at `from`: hands the best path's
  // tokens to `take` in order (offsets absolute), a segment at a time, and returns the score at
  // `to`. With `closeness`, records how close its decisions came.
  //
  // The lattice is cut where no piece crosses: at such a position every path has a token
  // boundary, so its best score is final and the best path up to it is fixed. The tokens up to
  // a cut are handed over there and the node array starts again from it, carrying its score,
  // which keeps the sums (float in SentencePiece) exactly those of one pass over the whole text
  // while memory stays that of a segment (nodes are 16 bytes: one array over a whole-file
  // document would cost 16 bytes a byte).
  template <typename Score, typename Take>
  Score best_path(const unsigned char* p, size_t from, size_t to, Score start, const Take& take,
                  Closeness* closeness) const {
    thread_local std::vector<Node<Score>> best;  // best[k]: the node at byte base + k
    size_t base = from;
    size_t reach = from;  // the furthest end of a piece that starts before the current position
    best.assign(std::min(to - from, kSegmentBytes) + max_piece_bytes_ + 8, Node<Score>{0, 0, -1});
    best[0] = {0, start, static_cast<int64_t>(from)};
    const Score unk_score = static_cast<Score>(min_score_ - kUnkPenalty);
    for (size_t at = from; at < to;) {
      if (at == reach && at - base >= kSegmentBytes) {
        take_segment(best, base, at, take);
        const Node<Score> carried = best[at - base];
        std::fill(best.begin(), best.begin() + static_cast<ptrdiff_t>(at - base + 1),
                  Node<Score>{0, 0, -1});
        best[0] = carried;
        base = at;
      }
      size_t mblen = utf8_length(p[at]);
      if (at + mblen > to) mblen = to - at;
      const size_t needed = at - base + std::max(mblen, max_piece_bytes_) + 1;
      if (best.size() < needed) best.resize(std::max(needed, 2 * best.size()), {0, 0, -1});
      const Score here = best[at - base].score;
      bool has_single = false;
      // SentencePiece computes a candidate in double (its score expression is double) and
      // stores it in float; HF uses double throughout. Same code for both.
      trie_.prefixes(p + at, p + to, [&](size_t len, uint32_t id) {
        Node<Score>& target = best[at - base + len];
        const double candidate = piece_score_[id] + static_cast<double>(here);
        if (closeness) note(*closeness, target, candidate);
        if (target.starts_at < 0 || candidate > static_cast<double>(target.score)) {
          target.score = static_cast<Score>(candidate);
          target.starts_at = static_cast<int64_t>(at);
          target.id = id;
        }
        if (len == mblen) has_single = true;
        reach = std::max(reach, at + len);
      });
      if (!has_single) {
        Node<Score>& target = best[at - base + mblen];
        Score candidate = unk_score + here;
        if (closeness) note(*closeness, target, candidate);
        if (target.starts_at < 0 || candidate > target.score) {
          if (!config_.unk_id)
            throw Error(ErrorCode::kInput, "", "Unigram: unknown character and no unk_id");
          target.score = candidate;
          target.starts_at = static_cast<int64_t>(at);
          target.id = *config_.unk_id;
        }
      }
      at += mblen;
      reach = std::max(reach, at);
    }
    take_segment(best, base, to, take);
    return best[to - base].score;
  }

  template <typename Score>
  static void note(Closeness& closeness, const Node<Score>& target, double candidate) {
    if (target.starts_at < 0)
      closeness.seen(candidate);
    else
      closeness.compared(candidate, static_cast<double>(target.score));
  }

  // The best path's tokens over [base, end), backtracked from `end`, handed to `take` in order.
  template <typename Score, typename Take>
  void take_segment(const std::vector<Node<Score>>& best, size_t base, size_t end,
                    const Take& take) const {
    thread_local std::vector<ModelToken> path;
    path.clear();
    for (size_t at = end; at > base;) {
      const Node<Score>& node = best[at - base];
      const auto from = static_cast<size_t>(node.starts_at);
      path.push_back({node.id, static_cast<uint32_t>(from), static_cast<uint32_t>(at)});
      at = from;
    }
    std::reverse(path.begin(), path.end());
    take(std::span<const ModelToken>(path));
  }

  template <typename Out>
  void emit_token(const ModelToken& t, const unsigned char* p, UnknownRun& unknown,
                  Out& out) const {
    if (config_.unk_id && t.id == *config_.unk_id) {
      if (unknown.open && config_.fuse_unk) {
        unknown.token.end = t.end;
        return;
      }
      flush_unknown(unknown, p, out);
      unknown = {true, t};
      return;
    }
    flush_unknown(unknown, p, out);
    append_token(out, t);
  }

  template <typename Out>
  void flush_unknown(UnknownRun& unknown, const unsigned char* p, Out& out) const {
    if (!unknown.open) return;
    unknown.open = false;
    const ModelToken& t = unknown.token;
    if (config_.byte_fallback) {
      bool all = true;
      for (size_t b = t.begin; b < t.end; ++b) all = all && byte_ids_[p[b]] != kNoId;
      if (all) {
        for (size_t b = t.begin; b < t.end; ++b)
          append_token(out, {byte_ids_[p[b]], t.begin, t.end});
        return;
      }
    }
    append_token(out, t);
  }

  uint64_t cache_owner_ = new_cache_owner();  // names this model's word caches
  UnigramConfig config_;
  StringIdMap by_piece_;
  DoubleArrayTrie trie_;
  std::vector<double> piece_score_;    // by id: what a match adds to the path's score
  std::vector<uint32_t> piece_bytes_;  // by id: a match's length
  bool spm_ = false;
  bool cut_at_spaces_ = true;  // with spm_: no piece holds "▁" past its first byte
  double min_score_ = 0, max_score_ = 0;
  std::array<uint32_t, 256> byte_ids_{};
  size_t max_piece_bytes_ = 0;  // the longest piece the trie can match
};

class WordLevelModel final : public Model {
 public:
  WordLevelModel(std::vector<std::string> vocab, std::optional<std::string> unk,
                 const std::string& source)
      : vocab_(std::move(vocab)) {
    for (uint32_t id = 0; id < vocab_.size(); ++id)
      if (!vocab_[id].empty()) map_.set(vocab_[id], id);
    if (unk) {
      uint32_t u = map_.find(*unk);
      if (u == kNoId)
        throw Error(ErrorCode::kInput, source,
                    "WordLevel unknown token '" + *unk + "' is not in the vocabulary");
      unk_ = u;
    }
  }
  void tokenize(std::string_view word, std::vector<ModelToken>& out) const override {
    uint32_t id = map_.find(word);
    if (id == kNoId) {
      if (!unk_)
        throw Error(ErrorCode::kInput, "",
                    "WordLevel: '" + std::string(word) +
                        "' is not in the vocabulary and there is no unk_token");
      id = *unk_;
    }
    out.push_back({id, 0, static_cast<uint32_t>(word.size())});
  }
  std::optional<uint32_t> token_to_id(std::string_view token) const override {
    uint32_t id = map_.find(token);
    if (id == kNoId) return std::nullopt;
    return id;
  }
  std::optional<std::string> id_to_token(uint32_t id) const override {
    if (id >= vocab_.size() || vocab_[id].empty()) return std::nullopt;
    return vocab_[id];
  }
  size_t size() const override { return vocab_.size(); }
  std::optional<uint32_t> unk_id() const override { return unk_; }

 private:
  std::vector<std::string> vocab_;
  StringIdMap map_;
  std::optional<uint32_t> unk_;
};

}  // namespace

std::unique_ptr<Model> make_unigram_model(UnigramConfig config, const std::string& source) {
  return std::make_unique<UnigramModel>(std::move(config), source);
}

std::unique_ptr<Model> make_word_level_model(std::vector<std::string> vocab,
                                             std::optional<std::string> unk_token,
                                             const std::string& source) {
  return std::make_unique<WordLevelModel>(std::move(vocab), std::move(unk_token), source);
}

}  // namespace shardkit::tok
