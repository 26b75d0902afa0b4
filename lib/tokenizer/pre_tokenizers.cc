#include "tokenizer/pre_tokenizers.h"

#include <algorithm>

#include "tokenizer/byte_level.h"
#include "tokenizer/normalizers.h"
#include "tokenizer/text_cuts.h"
#include "tokenizer/unicode.h"
#include "tokenizer/unicode_scripts.h"

namespace shardkit::tok {

void apply_split_behavior(const std::vector<std::pair<Span, bool>>& m, SplitBehavior behavior,
                          std::vector<Span>& out) {
  out.clear();
  auto append = [&](Span r) { out.push_back(r); };
  SplitRanges ranges(behavior, append);
  for (const auto& [r, is_match] : m) ranges.push(r, is_match);
  ranges.finish();
}

namespace {

using Matches = std::vector<std::pair<Span, bool>>;

// Every character for which `is_match` holds is one match (HF's Pattern for Fn(char) -> bool).
template <typename Pred>
void char_matches(const std::string& t, Pred&& is_match, Matches& out) {
  out.clear();
  size_t prev = 0;
  for (size_t i = 0; i < t.size();) {
    size_t b = i;
    char32_t c = decode_utf8(t, i);
    if (!is_match(c)) continue;
    if (prev != b) out.push_back({{static_cast<uint32_t>(prev), static_cast<uint32_t>(b)}, false});
    out.push_back({{static_cast<uint32_t>(b), static_cast<uint32_t>(i)}, true});
    prev = i;
  }
  if (prev != t.size())
    out.push_back({{static_cast<uint32_t>(prev), static_cast<uint32_t>(t.size())}, false});
}

void regex_matches(const std::string& t, const Regex& re, Matches& out) {
  out.clear();
  for_each_match_range(
      t, [&](size_t from, size_t* mb, size_t* me) { return re.search(t, from, t.size(), mb, me); },
      [&](Span r, bool is_match) {
        out.push_back({r, is_match});
      });
}

bool is_word(char32_t c) {
  if (c < 0x80)
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  return is_letter(c) || is_combining_mark(c) || is_decimal_or_letter_number(c) ||
         is_connector_punctuation(c) || c == 0x200C || c == 0x200D;
}

bool is_punct(char32_t c) {
  if (c < 0x80)
    return (c >= 33 && c <= 47) || (c >= 58 && c <= 64) || (c >= 91 && c <= 96) ||
           (c >= 123 && c <= 126);
  return is_bert_punctuation(c);
}

void split_piece(const PreTokenizer::Piece& p, const Matches& m, SplitBehavior behavior,
                 std::vector<PreTokenizer::Piece>& out) {
  thread_local std::vector<Span> ranges;
  apply_split_behavior(m, behavior, ranges);
  for (auto [a, b] : ranges)
    if (b > a) out.push_back({p.s.slice(a, b), a == 0 ? p.start : PreTokenizer::Start::kElsewhere});
}

}  // namespace

void PreTokenizer::apply(std::vector<Piece>& pieces) const {
  if (kind == kSequence) {
    for (const PreTokenizer& c : children) c.apply(pieces);
    return;
  }
  std::vector<Piece> next;
  Matches m;
  for (Piece& p : pieces) {
    const std::string& t = p.s.text();
    switch (kind) {
      case kSequence:
        break;
      case kMetaspace: {
        replace_literal(p.s, " ", replacement);
        const bool starts = p.s.text().compare(0, replacement.size(), replacement) == 0;
        if (!starts && prepends_at(p.start)) prepend_normalized(p.s, replacement);
        if (!split) {
          if (!p.s.text().empty()) next.push_back(std::move(p));
          break;
        }
        const std::string& s = p.s.text();
        m.clear();
        size_t prev = 0;
        for (size_t at = s.find(replacement); at != std::string::npos;
             at = s.find(replacement, at + replacement.size())) {
          if (prev != at)
            m.push_back({{static_cast<uint32_t>(prev), static_cast<uint32_t>(at)}, false});
          m.push_back(
              {{static_cast<uint32_t>(at), static_cast<uint32_t>(at + replacement.size())}, true});
          prev = at + replacement.size();
        }
        if (prev != s.size())
          m.push_back({{static_cast<uint32_t>(prev), static_cast<uint32_t>(s.size())}, false});
        split_piece(p, m, SplitBehavior::kMergedWithNext, next);
        break;
      }
      case kWhitespace: {
        // \w+|[^\w\s]+ kept, the rest removed.
        m.clear();
        size_t i = 0;
        while (i < t.size()) {
          size_t b = i;
          size_t j = i;
          char32_t c = decode_utf8(t, j);
          int cls = is_word(c) ? 0 : is_white_space(c) ? 1 : 2;
          i = j;
          while (i < t.size()) {
            size_t k = i;
            char32_t d = decode_utf8(t, k);
            int dc = is_word(d) ? 0 : is_white_space(d) ? 1 : 2;
            if (dc != cls) break;
            i = k;
          }
          m.push_back({{static_cast<uint32_t>(b), static_cast<uint32_t>(i)}, cls == 1});
        }
        split_piece(p, m, SplitBehavior::kRemoved, next);
        break;
      }
      case kWhitespaceSplit:
        char_matches(
            t, [](char32_t c) { return is_white_space(c); }, m);
        split_piece(p, m, SplitBehavior::kRemoved, next);
        break;
      case kPunctuation:
        char_matches(t, is_punct, m);
        split_piece(p, m, behavior, next);
        break;
      case kDigits:
        char_matches(
            t, [](char32_t c) { return c < 0x80 ? (c >= '0' && c <= '9') : is_number(c); }, m);
        split_piece(p, m, individual_digits ? SplitBehavior::kIsolated : SplitBehavior::kContiguous,
                    next);
        break;
      case kCharDelimiterSplit:
        char_matches(
            t, [&](char32_t c) { return c == delimiter; }, m);
        split_piece(p, m, SplitBehavior::kRemoved, next);
        break;
      case kBert: {
        thread_local std::vector<Piece> words;
        words.clear();
        char_matches(
            t, [](char32_t c) { return is_white_space(c); }, m);
        split_piece(p, m, SplitBehavior::kRemoved, words);
        for (const Piece& w : words) {
          char_matches(w.s.text(), is_punct, m);
          split_piece(w, m, SplitBehavior::kIsolated, next);
        }
        break;
      }
      case kUnicodeScripts: {
        // HF's UnicodeScripts: a piece starts before every character whose script is not Any and
        // differs from the last script other than Any (the first such character starts the first
        // piece). Any characters (U+0020, unassigned code points) join the piece before them;
        // leading ones, before any piece starts, are dropped, as HF drops them.
        m.clear();
        uint8_t last = kScriptAny;  // HF's None: no script seen yet
        bool started = false;
        uint32_t begin = 0;
        for (size_t i = 0; i < t.size();) {
          const auto b = static_cast<uint32_t>(i);
          const uint8_t s = hf_script(decode_utf8(t, i));
          if (s == kScriptAny) continue;
          if (!started || s != last) {
            if (started) m.push_back({{begin, b}, false});
            started = true;
            begin = b;
          }
          last = s;
        }
        if (started) m.push_back({{begin, static_cast<uint32_t>(t.size())}, false});
        split_piece(p, m, SplitBehavior::kIsolated, next);
        break;
      }
      case kSplit:
        regex_matches(t, *regex, m);
        if (invert)
          for (auto& x : m) x.second = !x.second;
        split_piece(p, m, behavior, next);
        break;
    }
  }
  pieces.swap(next);
}

bool PreTokenizer::prepends_every_text() const {
  return (kind == kMetaspace && prepend_scheme == kAlways) ||
         std::any_of(children.begin(), children.end(),
                     [](const PreTokenizer& c) { return c.prepends_every_text(); });
}

bool PreTokenizer::keeps_newline_cuts() const {
  switch (kind) {
    case kSequence:
      return std::all_of(children.begin(), children.end(),
                         [](const PreTokenizer& c) { return c.keeps_newline_cuts(); });
    case kSplit:
      // A String pattern sets `literal` (its regex escapes it).
      return !invert && literal_keeps_newline_cuts(literal);
    case kMetaspace:
      // Spaces become the replacement, and a piece starts at each; the piece across a cut goes
      // to the model in two, which the model's own check allows.
      return replacement.find('\n') == std::string::npos;
    default:
      return false;
  }
}

}  // namespace shardkit::tok
