// Unigram (SentencePiece's model): the best-scoring segmentation by Viterbi over a piece trie,
// exactly as HF's encode_optimized and SentencePiece's EncodeOptimized compute it: nodes visited
// by start position, a candidate replaces the best only when strictly better, an unknown single
// character costs min score - 10, and runs of unknown characters fuse.
#include <algorithm>
#include <cfloat>
#include <cstdio>
#include <memory>

#include "core/error.h"
#include "tokenizer/byte_key_cache.h"
#include "tokenizer/double_array_trie.h"
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
  void tokenize_ids(std::string_view s, std::vector<uint32_t>& ids) const override {
    tokenize_into(s, ids);
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

  template <typename Score>
  struct Node {
    uint32_t id;
    Score score;
    int64_t starts_at;  // absolute byte position; -1 while no path reaches this one
  };

  // The lattice is cut where no piece crosses: at such a position every path has a token
  // boundary, so its best score is final and the best path up to it is fixed. The tokens up to
  // a cut are emitted there and the node array starts again from it, carrying its score, which
  // keeps the sums (float in SentencePiece) exactly those of one pass over the whole text while
  // memory stays that of a segment (nodes are 16 bytes: one array over a whole-file document
  // would cost 16 bytes a byte).
  template <typename Score, typename Out>
  void viterbi(std::string_view s, Out& out) const {
    const size_t size = s.size();
    thread_local std::vector<Node<Score>> best;  // best[k]: the node at byte base + k
    size_t base = 0;
    size_t reach = 0;  // the furthest end of a piece that starts before the current position
    best.assign(std::min(size, kSegmentBytes) + max_piece_bytes_ + 8, Node<Score>{0, 0, -1});
    best[0].starts_at = 0;
    UnknownRun unknown;
    const Score unk_score = static_cast<Score>(min_score_ - kUnkPenalty);
    const auto* p = reinterpret_cast<const unsigned char*>(s.data());
    for (size_t start = 0; start < size;) {
      if (start == reach && start - base >= kSegmentBytes) {
        emit_segment(best, base, start, p, unknown, out);
        const Node<Score> carried = best[start - base];
        std::fill(best.begin(), best.begin() + static_cast<ptrdiff_t>(start - base + 1),
                  Node<Score>{0, 0, -1});
        best[0] = carried;
        base = start;
      }
      size_t mblen = utf8_length(p[start]);
      if (start + mblen > size) mblen = size - start;
      const size_t needed = start - base + std::max(mblen, max_piece_bytes_) + 1;
      if (best.size() < needed) best.resize(std::max(needed, 2 * best.size()), {0, 0, -1});
      const Score here = best[start - base].score;
      bool has_single = false;
      // SentencePiece computes a candidate in double (its score expression is double) and
      // stores it in float; HF uses double throughout. Same code for both.
      trie_.prefixes(p + start, p + size, [&](size_t len, uint32_t id) {
        Node<Score>& target = best[start - base + len];
        const double candidate = piece_score_[id] + static_cast<double>(here);
        if (target.starts_at < 0 || candidate > static_cast<double>(target.score)) {
          target.score = static_cast<Score>(candidate);
          target.starts_at = static_cast<int64_t>(start);
          target.id = id;
        }
        if (len == mblen) has_single = true;
        reach = std::max(reach, start + len);
      });
      if (!has_single) {
        Node<Score>& target = best[start - base + mblen];
        Score candidate = unk_score + here;
        if (target.starts_at < 0 || candidate > target.score) {
          if (!config_.unk_id)
            throw Error(ErrorCode::kInput, "", "Unigram: unknown character and no unk_id");
          target.score = candidate;
          target.starts_at = static_cast<int64_t>(start);
          target.id = *config_.unk_id;
        }
      }
      start += mblen;
      reach = std::max(reach, start);
    }
    emit_segment(best, base, size, p, unknown, out);
    flush_unknown(unknown, p, out);
  }

  // A run of unknown characters, fused into one token when the model says so, held back until
  // it ends: byte fallback spells out the whole run.
  struct UnknownRun {
    bool open = false;
    ModelToken token{};
  };

  // The best path's tokens over [base, end) of the text, backtracked from `end`, in order.
  template <typename Score, typename Out>
  void emit_segment(const std::vector<Node<Score>>& best, size_t base, size_t end,
                    const unsigned char* p, UnknownRun& unknown, Out& out) const {
    thread_local std::vector<ModelToken> rev;
    rev.clear();
    for (size_t at = end; at > base;) {
      const Node<Score>& node = best[at - base];
      const auto from = static_cast<size_t>(node.starts_at);
      rev.push_back({node.id, static_cast<uint32_t>(from), static_cast<uint32_t>(at)});
      at = from;
    }
    for (size_t k = rev.size(); k-- > 0;) {
      const ModelToken& t = rev[k];
      if (config_.unk_id && t.id == *config_.unk_id) {
        if (unknown.open && config_.fuse_unk) {
          unknown.token.end = t.end;
          continue;
        }
        flush_unknown(unknown, p, out);
        unknown = {true, t};
        continue;
      }
      flush_unknown(unknown, p, out);
      append_token(out, t);
    }
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
  std::vector<double> piece_score_;  // by id: what a match adds to the path's score
  bool spm_ = false;
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
