// BPE over characters (SentencePiece-style vocabularies such as Llama-2's and Gemma's), as HF's
// models/bpe: characters (with prefix/suffix) to ids, unknown characters to <0xNN> bytes or a
// (fused) unknown token, then merges lowest rank first, leftmost among equals.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <queue>
#include <utility>

#include "core/error.h"
#include "tokenizer/ascii_masks.h"
#include "tokenizer/byte_key_cache.h"
#include "tokenizer/joined_char_pairs.h"
#include "tokenizer/longest_prefix.h"
#include "tokenizer/merge_table.h"
#include "tokenizer/models.h"
#include "tokenizer/unicode.h"

namespace shardkit::tok {

namespace {

constexpr uint32_t kNoId = 0xFFFFFFFFu;
constexpr std::string_view kMeta = kSentencePieceSpace;  // a word's start

// Whether w holds "▁" at pos.
bool meta_at(std::string_view w, size_t pos) {
  return pos + kMeta.size() <= w.size() && w[pos] == kMeta[0] && w[pos + 1] == kMeta[1] &&
         w[pos + 2] == kMeta[2];
}

// The first "▁" of w at or after `from`, or npos.
size_t find_meta(std::string_view w, size_t from) { return find_literal(w, from, kMeta); }

// Chunks and parts up to this length go into the memo when first made. Longer ones go in only
// when made a second time (MadeBefore), up to kMaxRememberedBytes: most long chunks (a
// sentence of Chinese, a line of code) occur once and would crowd the memo, while those that
// come back (a rule of box-drawing characters, a table's separator, a repeated line) cost a
// merge a character each time: a run of 63 "─" took 4.6 us.
constexpr size_t kMaxCachedChunkBytes = 64;
constexpr size_t kMaxRememberedBytes = 1024;
// A thread's chunk memos for one model. Ids-only encoding keeps the ids of each chunk, and in
// front of them those of short chunks in the hot table's slots; encoding with offsets keeps
// each chunk's tokens with spans relative to the chunk's start. Each is built on first use.
//
// A chunk made from several parts (BpeModel::for_each_part) is stored whole only when it is
// made a second time: code has many chunks that occur once, and storing each of them pushed the
// parts out of the memo; prose repeats its chunks, and a chunk found whole is one lookup.
class MadeBefore {
 public:
  // Whether `key` was marked before (or another key with its bit); marks it. Cleared once an
  // eighth of the bits were set, so that a chunk seen once passes for one seen twice at most
  // 12% of the time.
  bool mark(std::string_view key) {
    const uint64_t h = hash_bytes(key.data(), key.size());
    if (bits_.test(h)) return true;
    bits_.set(h);
    if (++marked_ >= HashBits::kBits / 8) {
      bits_.clear();
      marked_ = 0;
    }
    return false;
  }

 private:
  HashBits bits_;
  size_t marked_ = 0;
};

struct ChunkMemo {
  ByteKeyCache<uint32_t> all;
  HotWordTable<uint32_t, 3> hot;
  MadeBefore made;
};
struct ChunkSpans {
  ByteKeyCache<ModelToken> all;
  MadeBefore made;
};

class BpeModel final : public Model {
 public:
  BpeModel(BpeModelConfig c, const std::string& source)
      : config_(std::move(c)), cache_owner_(new_cache_owner()) {
    const bool built = config_.compiled.empty();
    if (!built) {
      if (!restore(config_.compiled.bytes))
        throw Error(ErrorCode::kCorrupt, source, "the compiled tokenizer tables are damaged");
      tables_owner_ = config_.compiled.owner;
    } else {
      build(source);
    }
    config_.compiled = {};
    for (uint32_t u : config_.user_defined)
      if (u < tokens_.size() && !tokens_[u].empty()) user_defined_.add(tokens_[u], u);
    if (config_.unk_token) {
      uint32_t u = vocab_.find(*config_.unk_token);
      if (u != kNoId) unk_ = u;
    }
    byte_ids_.fill(kNoId);
    if (config_.byte_fallback) {
      char name[8];
      for (int b = 0; b < 256; ++b) {
        std::snprintf(name, sizeof name, "<0x%02X>", b);
        byte_ids_[b] = vocab_.find(name);
      }
    }
    for (int c = 0; c < 128; ++c) {
      char ch = static_cast<char>(c);
      ascii_ids_[c] = vocab_.find(&ch, 1);
    }
    if (built) joined_pairs_.build(tokens_, JoinedCharPairs::Symbols::kCharacters);
  }

  // The tables as a compiled form (compiled_cache.h).
  std::string compiled() const override {
    std::string out;
    BlobWriter w(out);
    tokens_.save(w);
    vocab_.save(w);
    merges_.save(w);
    w.value<uint8_t>(chunkable_);
    std::vector<std::string> crossing;
    for (const auto& list : crossing_)
      for (const auto& [left, right] : list) crossing.insert(crossing.end(), {left, right});
    w.strings(crossing);
    joined_pairs_.save(w);
    return out;
  }

 private:
  bool restore(std::string_view blob) {
    BlobReader r(blob);
    if (!tokens_.load(r) || !vocab_.load(r) || !merges_.load(r)) return false;
    chunkable_ = r.value<uint8_t>() != 0;
    std::vector<std::string> crossing;
    r.strings(crossing);
    // Read, not made again: for a 262k vocabulary that takes 15 ms, as long as the rest of a
    // load from the compiled form.
    if (!joined_pairs_.restore(r) || !r.at_end() || crossing.size() % 2 != 0) return false;
    for (size_t k = 0; k < crossing.size(); k += 2) {
      if (crossing[k].empty()) return false;
      crossing_[static_cast<unsigned char>(crossing[k].back())].emplace_back(crossing[k],
                                                                             crossing[k + 1]);
    }
    const size_t n = tokens_.size();
    return vocab_.all_ids_below(n) &&
           merges_.all_values([&](uint64_t v) { return static_cast<uint32_t>(v) < n; });
  }

  // The tables from the vocabulary and the merges (or the pieces' scores).
  void build(const std::string& source) {
    tokens_ = StringList(config_.vocab);
    config_.vocab = {};
    std::vector<uint32_t> present;  // ids with a token (holes in the vocabulary have none)
    present.reserve(tokens_.size());
    for (size_t id = 0; id < tokens_.size(); ++id)
      if (!tokens_[id].empty() || id == 0) present.push_back(static_cast<uint32_t>(id));
    vocab_.set_each(
        present.size(), [&](size_t i) { return tokens_[present[i]]; },
        [&](size_t i) { return present[i]; });
    if (!config_.merges.empty()) {
      const auto& m = config_.merges;
      const std::string_view prefix = config_.continuing_subword_prefix;
      StringList merged;
      merged.reserve(m.size(), 12 * m.size());
      for (const auto& [a, b] : m)
        merged.push_back(a,
                         !prefix.empty() && std::string_view(b).substr(0, prefix.size()) == prefix
                             ? std::string_view(b).substr(prefix.size())
                             : std::string_view(b));
      struct Side {
        const std::vector<std::pair<std::string, std::string>>& m;
        bool right;
        std::string_view operator[](size_t i) const { return right ? m[i].second : m[i].first; }
      };
      build_merge_table(
          vocab_, m.size(), Side{m, false}, Side{m, true}, merged,
          [&](size_t i) { return m[i].first + " " + m[i].second; }, source, merges_);
    }
    // The merges a score-ordered model derives that could join across a chunk boundary.
    std::vector<std::pair<std::string, std::string>> score_crossing;
    if (config_.merges.empty() && !config_.scores.empty()) {
      // Rank = position in descending score order; equal scores share a rank, so the leftmost
      // pair wins between them as in SentencePiece.
      std::vector<uint32_t> order(tokens_.size());
      for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
      std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
        return config_.scores[a] > config_.scores[b];
      });
      std::vector<uint32_t> rank(order.size());
      for (size_t k = 0, r = 0; k < order.size(); ++k) {
        if (k > 0 && config_.scores[order[k]] != config_.scores[order[k - 1]]) r = k;
        rank[order[k]] = static_cast<uint32_t>(r);
      }
      for (uint32_t id = 0; id < tokens_.size(); ++id) {
        const std::string_view piece = tokens_[id];
        if (!mergeable(id)) continue;
        for (size_t cut = 1; cut < piece.size(); ++cut) {
          if ((static_cast<unsigned char>(piece[cut]) & 0xC0) == 0x80) continue;
          uint32_t l = vocab_.find(piece.substr(0, cut));
          uint32_t r = vocab_.find(piece.substr(cut));
          if (l == kNoId || r == kNoId || !mergeable(l) || !mergeable(r)) continue;
          merges_.insert((uint64_t{l} << 32) | r, (uint64_t{rank[id]} << 32) | id);
          const std::string_view left = piece.substr(0, cut);
          if (crosses(left, piece.substr(cut)))
            score_crossing.emplace_back(left, piece.substr(cut));
        }
      }
    }
    find_crossing_merges(config_.merges.empty() ? score_crossing : config_.merges);
    config_.merges.clear();
    config_.merges.shrink_to_fit();
  }

 public:
  void tokenize(std::string_view word, std::vector<ModelToken>& out) const override {
    if (word.empty()) return;
    if (chunkable_ && !config_.ignore_merges && word.size() > kMeta.size()) {
      for_each_chunk(word, [&](std::string_view chunk, size_t start) {
        tokenize_cached(chunk, static_cast<uint32_t>(start), out);
      });
      return;
    }
    tokenize_word(word, out);
  }

  void tokenize_ids(std::string_view word, const char* readable_end,
                    std::vector<uint32_t>& ids) const override {
    if (!memoized_by_chunks(word)) {
      word_ids(word, ids);
      return;
    }
    Staged staged;
    staged_ids(thread_cache<ChunkMemo>(cache_owner_), word, readable_end, staged, ids);
    staged.flush(ids);
  }

  void tokenize_pieces_ids(std::string_view text, size_t begin, std::span<const size_t> ends,
                           std::vector<uint32_t>& ids) const override {
    ChunkMemo& memo = thread_cache<ChunkMemo>(cache_owner_);
    Staged staged;
    for (const size_t end : ends) {
      const std::string_view word = text.substr(begin, end - begin);
      begin = end;
      if (memoized_by_chunks(word)) {
        staged_ids(memo, word, text.data() + text.size(), staged, ids);
        continue;
      }
      staged.flush(ids);
      word_ids(word, ids);
    }
    staged.flush(ids);
  }

 private:
  using Hot = HotWordTable<uint32_t, 3>;
  using Staged = StagedIds<uint32_t, 64 * Hot::kSlotValues>;

  bool memoized_by_chunks(std::string_view word) const {
    return chunkable_ && !config_.ignore_merges && word.size() > kMeta.size();
  }

  // The ids of `word` into `staged` (or, past it, `ids`), a chunk at a time through the memo. A
  // short word (a Metaspace word: one chunk) is first looked up whole: exact for any word the
  // table holds, since a chunk's ids are those of its own chunks joined.
  void staged_ids(ChunkMemo& memo, std::string_view word, const char* limit, Staged& staged,
                  std::vector<uint32_t>& ids) const {
    if (word.size() <= Hot::kMaxKeyBytes &&
        staged.take_hit(memo.hot, Hot::key(word.data(), word.size(), limit), ids))
      return;
    for_each_chunk(word, [&](std::string_view chunk, size_t) {
      if (chunk.size() > Hot::kMaxKeyBytes) {
        staged.flush(ids);
        cached_ids(memo, chunk, ids);
        return;
      }
      const Hot::Key key = Hot::key(chunk.data(), chunk.size(), limit);
      if (staged.take_hit(memo.hot, key, ids)) return;
      staged.flush(ids);
      const size_t mark = ids.size();
      cached_ids(memo, chunk, ids);
      memo.hot.insert(key, std::span(ids).subspan(mark));
    });
  }

 public:
  // SentencePiece-style BPE sees a whole line as one word ("▁the▁cat"). Merges never join a
  // character with a following "▁" unless the vocabulary has such a token, so the line splits
  // before each "▁" that follows another character (except where a crossing merge's token sits
  // across the split) and each chunk is merged, and cached, on its own: the same tokens.
  template <typename Chunk>
  void for_each_chunk(std::string_view word, Chunk&& chunk) const {
    size_t start = 0;
    size_t at = find_meta(word, 1);
    while (true) {
      size_t cut = at == std::string_view::npos ? word.size() : at;
      if (cut < word.size()) {
        if (!boundary_ok(word, cut)) {
          at = find_meta(word, cut + 1);
          continue;
        }
      }
      chunk(word.substr(start, cut - start), start);
      if (cut >= word.size()) break;
      start = cut;
      at = find_meta(word, cut + kMeta.size());
    }
  }

  // A chunk's parts, cut between two characters that no merge joins (no token holds the pair,
  // joined_char_pairs.h): each merges on its own to the same tokens. Code cuts at most
  // punctuation this way ("(self," is "(", "self", ","), Chinese between most words; the parts
  // repeat far more often than their chunks: a chunk the memo does not hold is made from its
  // parts, through the memo.
  template <typename Part>
  void for_each_part(std::string_view chunk, Part&& part) const {
    const auto* c = reinterpret_cast<const unsigned char*>(chunk.data());
    const size_t n = chunk.size();
    size_t start = 0;
    if (n == 0) return part(chunk, start);
    const size_t first = std::min(utf8_length(c[0]), n);
    char32_t prev = decode_valid_utf8(c, first);
    for (size_t i = first; i < n;) {
      const size_t len = std::min(utf8_length(c[i]), n - i);
      const char32_t cp = decode_valid_utf8(c + i, len);
      if (!joined_pairs_.joins(prev, cp)) {
        part(chunk.substr(start, i - start), start);
        start = i;
      }
      prev = cp;
      i += len;
    }
    part(chunk.substr(start), start);
  }

  bool boundary_ok(std::string_view w, size_t cut) const {
    // The character before must not be "▁" itself (runs of "▁" merge with each other).
    if (cut >= kMeta.size() && meta_at(w, cut - kMeta.size())) return false;
    if (cut == 0) return true;
    for (const auto& [left, right] : crossing_[static_cast<unsigned char>(w[cut - 1])])
      if (cut >= left.size() && w.size() - cut >= right.size() &&
          w.compare(cut - left.size(), left.size(), left) == 0 &&
          w.compare(cut, right.size(), right) == 0)
        return false;
    return true;
  }

  void tokenize_cached(std::string_view chunk, uint32_t base, std::vector<ModelToken>& out) const {
    const size_t mark = out.size();
    ChunkSpans& memo = thread_cache<ChunkSpans>(cache_owner_);
    by_parts(
        memo.all, memo.made, chunk, out,
        [this](std::string_view c, std::vector<ModelToken>& o) { tokenize_word(c, o); },
        [&](size_t first, size_t start) {
          for (size_t k = first; k < out.size(); ++k) out[k].begin += start, out[k].end += start;
        });
    for (size_t k = mark; k < out.size(); ++k) out[k].begin += base, out[k].end += base;
  }

  // Appends the ids of `chunk`, through the ids-only memo.
  void cached_ids(ChunkMemo& memo, std::string_view chunk, std::vector<uint32_t>& ids) const {
    by_parts(
        memo.all, memo.made, chunk, ids,
        [this](std::string_view c, std::vector<uint32_t>& o) { word_ids(c, o); },
        [](size_t, size_t) {});
  }

  // Appends the tokens of `chunk` from `cache` when it holds the chunk; else those of its parts
  // (for_each_part), each through `cache`, and stores the chunk whole when it is a short single
  // part or was made before (MadeBefore). `placed(first, start)`: the tokens from out[first] on
  // are those of the part at `start`.
  template <typename Value, typename Make, typename Placed>
  void by_parts(ByteKeyCache<Value>& cache, MadeBefore& made, std::string_view chunk,
                std::vector<Value>& out, Make&& make, Placed&& placed) const {
    std::span<const Value> hit;
    const bool storable = chunk.size() <= kMaxRememberedBytes;
    if (storable && cache.find(chunk, &hit)) {
      out.insert(out.end(), hit.begin(), hit.end());
      return;
    }
    const size_t mark = out.size();
    bool whole = false;
    for_each_part(chunk, [&](std::string_view part, size_t start) {
      const size_t first = out.size();
      whole = part.size() == chunk.size();
      if (whole)
        make(part, out);
      else
        through_memo(cache, made, part, out, make);
      placed(first, start);
    });
    if (storable && ((whole && chunk.size() <= kMaxCachedChunkBytes) || made.mark(chunk)))
      cache.insert(chunk, std::span<const Value>(out).subspan(mark));
  }

  // Appends what `make(part, out)` appends, from `cache` when it holds the part.
  template <typename Value, typename Make>
  static void through_memo(ByteKeyCache<Value>& cache, MadeBefore& made, std::string_view part,
                           std::vector<Value>& out, Make&& make) {
    const size_t mark = out.size();
    std::span<const Value> hit;
    if (part.size() > kMaxRememberedBytes) {
      make(part, out);
    } else if (cache.find(part, &hit)) {
      out.insert(out.end(), hit.begin(), hit.end());
    } else {
      make(part, out);
      if (part.size() <= kMaxCachedChunkBytes || made.mark(part))
        cache.insert(part, std::span<const Value>(out).subspan(mark));
    }
  }

  void word_ids(std::string_view word, std::vector<uint32_t>& ids) const {
    thread_local std::vector<ModelToken> tokens;
    tokens.clear();
    tokenize_word(word, tokens);
    for (const ModelToken& t : tokens) ids.push_back(t.id);
    if (tokens.capacity() > kKeptScratchTokens) tokens = {};
  }

  void tokenize_word(std::string_view word, std::vector<ModelToken>& out) const {
    if (config_.ignore_merges) {
      uint32_t id = vocab_.find(word);
      if (id != kNoId) {
        out.push_back({id, 0, static_cast<uint32_t>(word.size())});
        return;
      }
    }
    thread_local std::vector<Sym> sym;
    sym.clear();
    initial_symbols(word, sym);
    merge_all(sym);
    for (const Sym& s : sym) out.push_back({s.id, s.begin, s.begin + s.len});
  }

  std::optional<uint32_t> token_to_id(std::string_view token) const override {
    uint32_t id = vocab_.find(token);
    if (id == kNoId) return std::nullopt;
    return id;
  }
  std::optional<std::string> id_to_token(uint32_t id) const override {
    if (id >= tokens_.size()) return std::nullopt;
    if (vocab_.find(tokens_[id]) != id) return std::nullopt;
    return std::string(tokens_[id]);
  }
  size_t size() const override { return tokens_.size(); }
  std::optional<uint32_t> unk_id() const override { return unk_; }

  // A merge only makes a piece, so none joins the two sides of a cut unless a piece holds the
  // newline and the byte after it. Affixes, whole-word lookups and an unknown newline that fuses
  // with the unknown characters after it would reach across; then no cuts.
  bool keeps_newline_cuts(std::array<bool, 256>& refused) const override {
    const bool newline_known = ascii_ids_['\n'] != kNoId || byte_ids_['\n'] != kNoId;
    if (!config_.continuing_subword_prefix.empty() || !config_.end_of_word_suffix.empty() ||
        config_.ignore_merges || (config_.fuse_unk && !newline_known))
      return false;
    const std::string_view all = tokens_.joined();
    for (size_t at = all.find('\n'); at != std::string_view::npos; at = all.find('\n', at + 1))
      if (at + 1 < all.size() && !tokens_.starts_at(at + 1))
        refused[static_cast<unsigned char>(all[at + 1])] = true;
    return true;
  }

  // A merge joins the sides of a cut before "▁" only if its right side starts with "▁" and its
  // left does not end with it: the crossing merges, which most models have none of.
  bool keeps_word_start_cuts() const override {
    const bool meta_known = vocab_.find(kMeta) != kNoId;
    if (!config_.continuing_subword_prefix.empty() || !config_.end_of_word_suffix.empty() ||
        config_.ignore_merges || (config_.fuse_unk && !meta_known))
      return false;
    return std::all_of(crossing_.begin(), crossing_.end(),
                       [](const auto& list) { return list.empty(); });
  }

 private:
  struct Sym {
    uint32_t id, begin, len;
    bool frozen = false;
  };

  // Merges whose right side starts with "▁" while the left side does not end with it: the only
  // ones that can join across a chunk boundary.
  static bool crosses(std::string_view left, std::string_view right) {
    const bool right_starts = right.compare(0, kMeta.size(), kMeta) == 0;
    const bool left_ends = left.size() >= kMeta.size() &&
                           left.compare(left.size() - kMeta.size(), kMeta.size(), kMeta) == 0;
    return right_starts && !left_ends && !left.empty();
  }

  // `merges`: the model's merge list, or the merges a score-ordered model derives from pairs of
  // its pieces (a SentencePiece model trained without splitting at white space has pieces such
  // as "s▁the"); those that cross are indexed, and a chunk is never cut where one sits.
  void find_crossing_merges(const std::vector<std::pair<std::string, std::string>>& merges) {
    chunkable_ = config_.continuing_subword_prefix.empty() && config_.end_of_word_suffix.empty() &&
                 vocab_.find(kMeta) != kNoId;
    if (!chunkable_) return;
    for (const auto& [a, b] : merges)
      if (crosses(a, b)) crossing_[static_cast<unsigned char>(a.back())].emplace_back(a, b);
    // User-defined symbols are matched, longest first, before merging: a match could only cross
    // a cut if its symbol held "▁" after its first character; then no chunks.
    for (uint32_t id : config_.user_defined)
      if (tokens_[id].find(kMeta, 1) != std::string::npos) chunkable_ = false;
  }

  bool mergeable(uint32_t id) const {
    return config_.mergeable.empty() || (id < config_.mergeable.size() && config_.mergeable[id]);
  }

  void initial_symbols(std::string_view w, std::vector<Sym>& sym) const {
    const bool plain =
        config_.continuing_subword_prefix.empty() && config_.end_of_word_suffix.empty();
    bool have_unk = false;
    Sym unk{0, 0, 0};
    thread_local std::string s;
    const auto* p = reinterpret_cast<const unsigned char*>(w.data());
    for (size_t i = 0; i < w.size();) {
      size_t n = utf8_length(p[i]);
      if (i + n > w.size()) n = w.size() - i;
      if (const LongestPrefix::Match m = user_defined_.longest(w, i);
          m.value != LongestPrefix::kNone) {
        if (have_unk) {
          sym.push_back(unk);
          have_unk = false;
        }
        sym.push_back({m.value, static_cast<uint32_t>(i), static_cast<uint32_t>(m.length), true});
        i += m.length;
        continue;
      }
      uint32_t id;
      std::string_view piece = w.substr(i, n);
      if (plain) {
        id = n == 1 && p[i] < 0x80 ? ascii_ids_[p[i]] : vocab_.find(piece);
      } else {
        s.clear();
        if (i > 0) s += config_.continuing_subword_prefix;
        s += piece;
        if (i + n == w.size()) s += config_.end_of_word_suffix;
        id = vocab_.find(s);
        piece = s;
      }
      const auto begin = static_cast<uint32_t>(i);
      i += n;
      if (id != kNoId) {
        if (have_unk) {
          sym.push_back(unk);
          have_unk = false;
        }
        sym.push_back({id, begin, static_cast<uint32_t>(n)});
        continue;
      }
      if (config_.byte_fallback) {
        bool all = true;
        for (unsigned char b : piece) all = all && byte_ids_[b] != kNoId;
        if (all) {
          // HF gives each byte token a length of 1 (in the word's byte positions).
          uint32_t at = begin;
          for (unsigned char b : piece) sym.push_back({byte_ids_[b], at++, 1});
          continue;
        }
      }
      if (!unk_) continue;
      if (have_unk && config_.fuse_unk) {
        unk.len += static_cast<uint32_t>(n);
      } else {
        if (have_unk) sym.push_back(unk);
        unk = {*unk_, begin, static_cast<uint32_t>(n)};
        have_unk = true;
      }
    }
    if (have_unk) sym.push_back(unk);
  }

  uint64_t pair(const Sym& a, const Sym& b) const {
    if (a.frozen || b.frozen) return U64Map::kEmpty;
    return merges_.find((uint64_t{a.id} << 32) | b.id);
  }

  void merge_all(std::vector<Sym>& sym) const {
    const size_t m = sym.size();
    if (m < 2) return;
    if (m <= 64) {
      thread_local std::vector<uint64_t> pr;
      pr.resize(m);
      for (size_t i = 0; i + 1 < m; ++i) pr[i] = pair(sym[i], sym[i + 1]);
      size_t len = m;
      while (len > 1) {
        uint64_t best = U64Map::kEmpty;
        size_t bi = 0;
        for (size_t i = 0; i + 1 < len; ++i) {
          if ((pr[i] >> 32) < (best >> 32)) {
            best = pr[i];
            bi = i;
          }
        }
        if (best == U64Map::kEmpty) break;
        sym[bi].id = static_cast<uint32_t>(best);
        sym[bi].len += sym[bi + 1].len;
        for (size_t i = bi + 1; i + 1 < len; ++i) {
          sym[i] = sym[i + 1];
          pr[i] = pr[i + 1];
        }
        --len;
        if (bi > 0) pr[bi - 1] = pair(sym[bi - 1], sym[bi]);
        if (bi + 1 < len) pr[bi] = pair(sym[bi], sym[bi + 1]);
      }
      sym.resize(len);
      return;
    }
    // Long words: a heap of (rank, position) over a linked list, as HF's Word::merge_all.
    thread_local std::vector<int32_t> prev, next;
    prev.resize(m);
    next.resize(m);
    for (size_t i = 0; i < m; ++i) {
      prev[i] = static_cast<int32_t>(i) - 1;
      next[i] = i + 1 < m ? static_cast<int32_t>(i + 1) : -1;
    }
    using Item = std::pair<uint64_t, uint32_t>;  // (rank << 32 | merged id, position)
    auto cmp = [](const Item& a, const Item& b) {
      if ((a.first >> 32) != (b.first >> 32)) return (a.first >> 32) > (b.first >> 32);
      return a.second > b.second;
    };
    thread_local std::vector<Item> heap_store;
    heap_store.clear();
    std::priority_queue<Item, std::vector<Item>, decltype(cmp)> heap(cmp, std::move(heap_store));
    auto push = [&](int32_t i) {
      if (i < 0 || next[i] < 0) return;
      uint64_t v = pair(sym[i], sym[next[i]]);
      if (v != U64Map::kEmpty) heap.emplace(v, static_cast<uint32_t>(i));
    };
    for (size_t i = 0; i + 1 < m; ++i) push(static_cast<int32_t>(i));
    while (!heap.empty()) {
      auto [v, pos] = heap.top();
      heap.pop();
      if (sym[pos].len == 0 || next[pos] < 0) continue;
      int32_t r = next[pos];
      if (pair(sym[pos], sym[r]) != v) continue;  // stale
      sym[pos].id = static_cast<uint32_t>(v);
      sym[pos].len += sym[r].len;
      sym[r].len = 0;
      next[pos] = next[r];
      if (next[r] >= 0) prev[next[r]] = static_cast<int32_t>(pos);
      push(prev[pos]);
      push(static_cast<int32_t>(pos));
    }
    size_t k = 0;
    for (int32_t i = 0; i >= 0; i = next[i]) sym[k++] = sym[i];
    sym.resize(k);
  }

  BpeModelConfig config_;
  uint64_t cache_owner_;  // names this model's chunk caches (byte_key_cache.h)
  bool chunkable_ = false;
  // Crossing merges by the last byte of their left side: a cut is checked against those that
  // could end at the byte before it (InternLM2 has 81, each after a tab or a newline).
  std::array<std::vector<std::pair<std::string, std::string>>, 256> crossing_;
  std::shared_ptr<const void> tables_owner_;  // the compiled form the tables are views of
  StringList tokens_;                         // by id (holes: empty)
  LongestPrefix user_defined_;                // config_.user_defined's tokens -> their ids
  StringIdMap vocab_;
  U64Map merges_;
  std::array<uint32_t, 256> byte_ids_{};
  std::array<uint32_t, 128> ascii_ids_{};
  JoinedCharPairs joined_pairs_;
  std::optional<uint32_t> unk_;
};

}  // namespace

std::unique_ptr<Model> make_bpe_model(BpeModelConfig config, const std::string& source) {
  return std::make_unique<BpeModel>(std::move(config), source);
}

}  // namespace shardkit::tok
