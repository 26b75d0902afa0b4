// One shardify input reader on a fuzzed file; the format is fixed at compile time
// (FUZZ_INPUT_FORMAT = "jsonl", "csv", "tsv", "squad" or "text"). The first input byte selects
// reader options (bit 0: a pair field, bit 1: a label field, bit 2: the labels-only pre-pass,
// bit 3: blank-line document separation), the rest is the file. Readers report bad content in
// Example::error and may throw only shardkit::Error. An example they pass without an error must
// hold valid UTF-8 (the tokenizer's precondition), and a SQuAD answer they accept must lie inside
// its context at the offset they computed.
#include <cstdint>
#include <string>
#include <string_view>

#include "core/error.h"
#include "fuzz_util.h"
#include "shardify/example_reader.h"

namespace {

// An independent UTF-8 check (RFC 3629: no overlongs, no surrogates, nothing past U+10FFFF).
bool valid_utf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    size_t n = 0;
    uint32_t cp = 0;
    if (c < 0x80) {
      ++i;
      continue;
    } else if ((c & 0xe0) == 0xc0) {
      n = 1, cp = c & 0x1f;
    } else if ((c & 0xf0) == 0xe0) {
      n = 2, cp = c & 0x0f;
    } else if ((c & 0xf8) == 0xf0) {
      n = 3, cp = c & 0x07;
    } else {
      return false;
    }
    if (s.size() - i < n + 1) return false;
    for (size_t k = 1; k <= n; ++k) {
      const auto d = static_cast<unsigned char>(s[i + k]);
      if ((d & 0xc0) != 0x80) return false;
      cp = cp << 6 | (d & 0x3f);
    }
    if ((n == 1 && cp < 0x80) || (n == 2 && cp < 0x800) || (n == 3 && cp < 0x10000) ||
        cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
      return false;
    i += n + 1;
  }
  return true;
}

shardkit::shardify::InputFormat format_under_test() {
  return shardkit::shardify::parse_input_format(FUZZ_INPUT_FORMAT);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace shardkit;
  using namespace shardkit::shardify;
  if (size < 1) return 0;
  static const std::string path = fuzz::scratch_path(std::string("input.") + FUZZ_INPUT_FORMAT);
  fuzz::write_scratch(path, data + 1, size - 1);
  ReaderOptions o;
  o.format = format_under_test();
  o.text_field = "text";
  if (data[0] & 1) o.pair_field = "text_pair";
  if (data[0] & 2) o.label_field = "label";
  o.labels_only = (data[0] & 4) != 0;
  o.doc_separator = (data[0] & 8)    ? DocSeparator::kBlankLine
                    : (data[0] & 16) ? DocSeparator::kFile
                                     : DocSeparator::kLine;
  try {
    auto reader = ExampleReader::open(path, 0, o);
    Example ex;
    for (int n = 0; n < 100000 && reader->next(ex); ++n) {
      if (!ex.error.empty()) continue;
      if (!valid_utf8(ex.text) || !valid_utf8(ex.text_pair) || !valid_utf8(ex.label))
        __builtin_trap();
      for (const QaQuestion& q : ex.questions) {
        if (!q.error.empty()) continue;
        if (!valid_utf8(q.question)) __builtin_trap();
        if (q.impossible) continue;
        if (q.answer_start > ex.text.size() ||
            ex.text.compare(q.answer_start, q.answer_text.size(), q.answer_text) != 0)
          __builtin_trap();
      }
    }
  } catch (const Error&) {
  }
  return 0;
}
