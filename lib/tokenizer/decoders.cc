#include "tokenizer/decoders.h"

#include "tokenizer/byte_level.h"
#include "tokenizer/unicode.h"

namespace shardkit::tok {

namespace {

void replace_all(std::string& s, const std::string& from, const std::string& to) {
  if (from.empty()) return;
  std::string out;
  size_t last = 0;
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + from.size())) {
    out.append(s, last, at - last);
    out += to;
    last = at + from.size();
  }
  if (last == 0) return;
  out.append(s, last, std::string::npos);
  s.swap(out);
}

bool valid_utf8(const std::string& s) {
  try {
    validate_utf8(s);
    return true;
  } catch (...) {
    return false;
  }
}

int hex(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

// HF's WordPiece decoder cleanup (clean_up_tokenization).
void cleanup_text(std::string& s) {
  for (auto [from, to] : {std::pair{" .", "."},
                          {" ?", "?"},
                          {" !", "!"},
                          {" ,", ","},
                          {" ' ", "'"},
                          {" n't", "n't"},
                          {" 'm", "'m"},
                          {" do not", " don't"},
                          {" 's", "'s"},
                          {" 've", "'ve"},
                          {" 're", "'re"}})
    replace_all(s, from, to);
}

}  // namespace

void Decoder::decode_chain(std::vector<std::string>& tokens) const {
  switch (kind) {
    case kSequence:
      for (const Decoder& d : children) d.decode_chain(tokens);
      return;
    case kReplace:
      for (std::string& t : tokens) {
        if (!regex) {
          replace_all(t, pattern, content);
          continue;
        }
        std::string out;
        size_t last = 0, from = 0, mb, me;
        while (from < t.size() && regex->search(t, from, t.size(), &mb, &me)) {
          out.append(t, last, mb - last);
          out += content;
          last = me;
          from = me > mb ? me : mb + 1;
        }
        out.append(t, last, std::string::npos);
        t.swap(out);
      }
      return;
    case kByteFallback: {
      std::vector<std::string> out;
      std::string bytes;
      size_t count = 0;
      auto flush = [&] {
        if (count == 0) return;
        if (valid_utf8(bytes)) {
          out.push_back(bytes);
        } else {
          for (size_t k = 0; k < count; ++k) out.push_back("\xEF\xBF\xBD");
        }
        bytes.clear();
        count = 0;
      };
      for (std::string& t : tokens) {
        int hi = -1, lo = -1;
        if (t.size() == 6 && t.compare(0, 3, "<0x") == 0 && t[5] == '>') {
          hi = hex(t[3]);
          lo = hex(t[4]);
        }
        if (hi >= 0 && lo >= 0) {
          bytes.push_back(static_cast<char>(hi * 16 + lo));
          ++count;
          continue;
        }
        flush();
        out.push_back(std::move(t));
      }
      flush();
      tokens.swap(out);
      return;
    }
    case kFuse: {
      std::string all;
      for (const std::string& t : tokens) all += t;
      tokens.assign(1, std::move(all));
      return;
    }
    case kStrip: {
      const std::string& c = content;
      for (std::string& t : tokens) {
        std::vector<std::pair<size_t, size_t>> chars;  // (byte start, byte length)
        for (size_t i = 0; i < t.size();) {
          size_t b = i;
          decode_utf8(t, i);
          chars.emplace_back(b, i - b);
        }
        auto is_c = [&](size_t k) { return t.compare(chars[k].first, chars[k].second, c) == 0; };
        size_t start_cut = 0;
        for (size_t k = 0; k < start && k < chars.size(); ++k) {
          if (!is_c(k)) break;
          start_cut = k + 1;
        }
        size_t stop_cut = chars.size();
        for (size_t k = 0; k < stop && k < chars.size(); ++k) {
          size_t index = chars.size() - k - 1;
          if (!is_c(index)) break;
          stop_cut = index;
        }
        if (stop_cut <= start_cut) {
          t.clear();
          continue;
        }
        size_t b = start_cut < chars.size() ? chars[start_cut].first : t.size();
        size_t e = stop_cut < chars.size() ? chars[stop_cut].first : t.size();
        t = t.substr(b, e - b);
      }
      return;
    }
    case kMetaspace:
      for (size_t i = 0; i < tokens.size(); ++i) {
        std::string& t = tokens[i];
        std::string out;
        size_t last = 0;
        for (size_t at = t.find(replacement); at != std::string::npos;
             at = t.find(replacement, at + replacement.size())) {
          out.append(t, last, at - last);
          const bool dropped = i == 0 && prepend && (!first_leading_only || at == 0);
          if (!dropped) out.push_back(' ');
          last = at + replacement.size();
        }
        out.append(t, last, std::string::npos);
        t.swap(out);
      }
      return;
    case kWordPiece:
      for (size_t i = 0; i < tokens.size(); ++i) {
        std::string& t = tokens[i];
        if (i != 0) {
          if (t.compare(0, prefix.size(), prefix) == 0) {
            t.erase(0, prefix.size());
          } else {
            t.insert(0, " ");
          }
        }
        if (cleanup) cleanup_text(t);
      }
      return;
    case kBpe:
      for (size_t i = 0; i < tokens.size(); ++i) {
        std::string& t = tokens[i];
        replace_all(t, suffix, i + 1 == tokens.size() ? "" : " ");
      }
      return;
  }
}

}  // namespace shardkit::tok
