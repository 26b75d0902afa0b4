#include "shardify/convert_option_table.h"

#include <filesystem>

#include "core/available_cores.h"
#include "core/block_codec.h"
#include "format/shard_format.h"
#include "shardify/part_from_env.h"

namespace shardkit::shardify {
namespace {

using options::computed_option;
using options::Kind;
using options::named;
using options::Option;
using options::option;
using options::path_option;
using options::Value;
using O = ConvertOptions;

constexpr const char* kInputsOnly =
    "is about input files; write_dataset reads the rows it is given";

std::vector<Option<O>> input_options() {
  return {
      path_option<O>(
          "input",
          "Input files, directories or globs such as "
          "'data/train-*.parquet' (.gz/.zst read transparently)",
          [](auto& o) -> auto& { return o.inputs; })
          .flag("-i")
          .several()
          .cli_only(kInputsOnly),
      options::choice_option<O>(
          "format", "Input format; inferred from the file name when omitted",
          [](auto& o) -> auto& { return o.format; },
          std::vector<std::pair<std::string, std::optional<InputFormat>>>{
              {"jsonl", InputFormat::kJsonl},
              {"text", InputFormat::kText},
              {"tsv", InputFormat::kTsv},
              {"csv", InputFormat::kCsv},
              {"squad", InputFormat::kSquad},
              {"parquet", InputFormat::kParquet}})
          .cli_only(kInputsOnly),
      option<O>(
          "where",
          "parquet: keep the rows where this DuckDB SQL predicate over the file's columns "
          "holds, e.g. \"lang = 'en' AND length(text) > 100\"",
          [](auto& o) -> auto& { return o.where; })
          .cli_only(kInputsOnly),
      option<O>(
          "quoting",
          "tsv/csv: RFC 4180 quoting; --no-quoting makes quotes ordinary characters "
          "(GLUE-style TSV)",
          [](auto& o) -> auto& { return o.quoting; })
          .cli_only(kInputsOnly),
      options::choice_option<O>(
          "doc_sep",
          "text: what one document is: 'file' (a whole file), 'line' (each "
          "line) or 'blank' (blocks separated by blank lines)",
          [](auto& o) -> auto& { return o.doc_separator; },
          named(doc_separator_name,
                {DocSeparator::kFile, DocSeparator::kLine, DocSeparator::kBlankLine}))
          .cli_only(kInputsOnly),
      computed_option<O>(
          "part", Kind::kText,
          "Convert only part i of N (0 <= i < N) of the input files; see 'merge'. 'auto' takes "
          "i/N from a Slurm array job (SLURM_ARRAY_TASK_ID/_MIN/_COUNT); 'auto/N' also from a "
          "Kubernetes Indexed Job (JOB_COMPLETION_INDEX, N = completions)",
          [](const O& o) -> Value {
            if (!o.part) return {};
            return std::to_string(o.part->index) + "/" + std::to_string(o.part->count);
          },
          [](O& o, const Value& v) { o.part = resolve_part(std::get<std::string>(v)); })
          .cli_only(kInputsOnly),
  };
}

// Where a task's options apply (Option::only_for): given to another task they would be ignored.
bool is_task(const O& o, Task task) { return o.task.task == task; }
bool is_sft(const O& o) { return is_task(o, Task::kSft); }
bool is_qa(const O& o) { return is_task(o, Task::kQa); }
bool has_labels(const O& o) { return task_has_labels(o.task.task); }
bool renders_a_template(const O& o) { return is_sft(o) && !o.task.chat_template.empty(); }
constexpr const char* kForSft = "is for --task sft";
constexpr const char* kForQa = "is for --task qa";
constexpr const char* kForLabels = "is for --task cls and pair";
constexpr const char* kForTemplates = "is for --task sft with --chat-template";

std::vector<Option<O>> field_options() {
  auto field = [](std::string name, std::string help, auto access) {
    return option<O>(std::move(name), std::move(help), access).in_group("fields");
  };
  return {
      field(
          "text_field", "JSONL/Parquet dotted path or CSV/TSV column of the text",
          [](auto& o) -> auto& { return o.text_field; }),
      field(
          "pair_field", "Field of the second text (--task pair)",
          [](auto& o) -> auto& { return o.pair_field; })
          .only_for([](const O& o) { return is_task(o, Task::kPair); }, "is for --task pair"),
      field(
          "label_field", "Field of the label (--task cls, pair)",
          [](auto& o) -> auto& { return o.label_field; })
          .only_for(has_labels, kForLabels),
      field(
          "context_field", "qa from JSONL: field of the context",
          [](auto& o) -> auto& { return o.context_field; })
          .only_for(is_qa, kForQa),
      field(
          "question_field", "qa from JSONL: field of the question",
          [](auto& o) -> auto& { return o.question_field; })
          .only_for(is_qa, kForQa),
      field(
          "answers_field",
          "qa from JSONL: {\"text\": [...], \"answer_start\": [...]} as HF datasets has it, "
          "or a SQuAD-style list; empty means unanswerable",
          [](auto& o) -> auto& { return o.answers_field; })
          .only_for(is_qa, kForQa),
      field(
          "prompt_field", "sft: field of the prompt",
          [](auto& o) -> auto& { return o.prompt_field; })
          .only_for([](const O& o) { return is_sft(o) && !o.task.messages; },
                    "is for --task sft without --messages-field"),
      field(
          "response_field", "sft: field of the response (trained on)",
          [](auto& o) -> auto& { return o.response_field; })
          .only_for([](const O& o) { return is_sft(o) && !o.task.messages; },
                    "is for --task sft without --messages-field"),
      computed_option<O>(
          "messages_field", Kind::kText,
          "sft, JSONL: field of an OpenAI-style [{role, content}] list (instead of "
          "prompt/response); needs --chat-template",
          [](const O& o) -> Value { return o.task.messages ? Value(o.messages_field) : Value{}; },
          [](O& o, const Value& v) {
            o.task.messages = std::holds_alternative<std::string>(v);
            if (o.task.messages) o.messages_field = std::get<std::string>(v);
          })
          .in_group("fields")
          .only_for(is_sft, kForSft),
  };
}

std::vector<Option<O>> task_options() {
  return {
      options::choice_option<O>(
          "task", "Record layout: lm (packed windows), cls, pair, qa or sft (loss-masked chat)",
          [](auto& o) -> auto& { return o.task.task; },
          named(task_name, {Task::kLm, Task::kCls, Task::kPair, Task::kQa, Task::kSft})),
      path_option<O>(
          "tokenizer",
          "tokenizer.json, WordPiece vocab.txt, GPT-2 encoder.json or "
          "SentencePiece .model",
          [](auto& o) -> auto& { return o.tokenizer_path; }),
      path_option<O>(
          "out",
          "Dataset directory to create (published atomically), or s3://bucket/prefix "
          "(built in $TMPDIR, then uploaded: shards first, manifest last)",
          [](auto& o) -> auto& { return o.out; })
          .flag("-o"),
      option<O>(
          "labels",
          "Label names in index order (a,b,c); otherwise numeric order when all labels are "
          "integers, else byte-wise lexicographic order",
          [](auto& o) -> auto& { return o.labels; })
          .only_for(has_labels, kForLabels),
      computed_option<O>(
          "max_len", Kind::kUInt, "Tokens per record",
          [](const O& o) -> Value {
            return o.task.max_len ? Value(uint64_t(o.task.max_len)) : Value{};
          },
          [](O& o, const Value& v) {
            o.task.max_len =
                std::holds_alternative<uint64_t>(v) ? uint32_t(std::get<uint64_t>(v)) : 0;
          })
          .range(2, 1 << 20)
          .automatically(
              [](const O& o) -> Value { return uint64_t(o.task.task == Task::kQa ? 384 : 512); },
              "512; 384 for --task qa"),
      option<O>(
          "pack",
          "lm: pack documents into rows (--no-pack: one truncated/padded record per "
          "document); sft: pack whole conversations into rows (their starts are stored, so "
          "the loader gives position_ids/cu_seqlens per conversation)",
          [](auto& o) -> auto& { return o.task.pack; })
          .automatically([](const O& o) -> Value { return o.task.task == Task::kLm; },
                         "true for --task lm, false for sft")
          .alias("no_pack", true)
          .only_for([](const O& o) { return is_task(o, Task::kLm) || is_sft(o); },
                    "is for --task lm and sft"),
      option<O>(
          "position_ids",
          "lm: also store position_ids that restart at every document inside a window",
          [](auto& o) -> auto& { return o.task.position_ids; })
          .only_for([](const O& o) { return is_task(o, Task::kLm) && o.task.pack.value_or(true); },
                    "is for --task lm, packed (the rows of --no-pack start at 0)"),
      option<O>(
          "doc_stride", "qa: tokens shared by consecutive context windows",
          [](auto& o) -> auto& { return o.task.doc_stride; })
          .only_for(is_qa, kForQa),
      option<O>(
          "max_query_len", "qa: question tokens kept",
          [](auto& o) -> auto& { return o.task.max_query_len; })
          .at_least(1)
          .only_for(is_qa, kForQa),
  };
}

// sft's options (after max_len, which the default byte limit of a rendering follows).
std::vector<Option<O>> sft_options() {
  return {
      path_option<O>(
          "chat_template",
          "sft: render with the chat_template of this HF tokenizer_config.json (Python "
          "3 and python3-jinja2); without it: prompt ids + response ids + end-of-text",
          [](auto& o) -> auto& { return o.task.chat_template; })
          .only_for(is_sft, kForSft),
      options::choice_option<O>(
          "train_on", "sft: loss on every assistant turn, the last one, or all tokens",
          [](auto& o) -> auto& { return o.task.train_on; },
          named(train_on_name, {TrainOn::kAssistant, TrainOn::kLast, TrainOn::kAll}))
          .only_for(is_sft, kForSft),
      computed_option<O>(
          "max_render_bytes", Kind::kUInt,
          "sft with --chat-template: a conversation whose template renders more bytes is a bad "
          "row",
          [](const O& o) -> Value {
            return o.max_render_bytes ? Value(o.max_render_bytes) : Value{};
          },
          [](O& o, const Value& v) {
            o.max_render_bytes =
                std::holds_alternative<uint64_t>(v) ? std::get<uint64_t>(v) : uint64_t{0};
          })
          // 1 TiB: the renderer's memory limit (16 x this) must still be a number it can set.
          .range(1, double(uint64_t{1} << 40))
          .automatically(
              [](const O& o) -> Value {
                return std::max<uint64_t>(64 << 10, uint64_t{32} * o.task.max_len);
              },
              "32 x --max-len, at least 65536")
          .only_for(renders_a_template, kForTemplates),
      option<O>(
          "render_timeout",
          "sft with --chat-template: seconds a conversation's template may take to render; "
          "a slower one is a bad row",
          [](auto& o) -> auto& { return o.render_timeout; })
          .range(0.001, 1e6)
          .only_for(renders_a_template, kForTemplates),
      options::choice_option<O>(
          "truncation",
          "sft: a conversation over --max-len is dropped, or loses its oldest tokens (left) "
          "while every trained token still fits",
          [](auto& o) -> auto& { return o.task.sft_truncation; },
          named(truncation_name, {Truncation::kDrop, Truncation::kLeft}))
          .only_for(is_sft, kForSft),
  };
}

std::vector<Option<O>> run_options() {
  return {
      option<O>(
          "threads",
          "Threads that read, tokenize and compress; 0: all the cores this process may use (its "
          "CPU affinity, within its cgroup's CPU limit)",
          [](auto& o) -> auto& { return o.threads; })
          .flag("-j")
          .defaults_to("0 (all cores)"),
      options::choice_option<O>(
          "on_error", "fail: stop at the first bad example; skip: count and go on",
          [](auto& o) -> auto& { return o.on_error; },
          std::vector<std::pair<std::string, OnError>>{{"fail", OnError::kFail},
                                                       {"skip", OnError::kSkip}}),
      option<O>(
          "force", "Replace an existing dataset at --out",
          [](auto& o) -> auto& { return o.force; }),
      option<O>(
          "allow_empty", "Write a dataset even when no record results (otherwise an error)",
          [](auto& o) -> auto& { return o.allow_empty; }),
      option<O>(
          "zstd_level", "zstd level of the blocks", [](auto& o) -> auto& { return o.zstd_level; })
          .range(1, 22),
      option<O>(
          "block_size", "Uncompressed bytes per block",
          [](auto& o) -> auto& { return o.block_bytes; })
          .range(1, double(format::kMaxBlockRawSize)),
      option<O>(
          "shard_size", "Stored bytes after which a shard is closed",
          [](auto& o) -> auto& { return o.shard_bytes; })
          .at_least(1),
      options::choice_option<O>(
          "filter", "Block filter before zstd: none (best for token ids) or byteplanes",
          [](auto& o) -> auto& { return o.filter; },
          named(block_filter_name, {format::BlockFilter::kNone, format::BlockFilter::kBytePlanes})),
  };
}

std::vector<Option<O>> all_options() {
  std::vector<Option<O>> all = input_options();
  for (auto* group : {&task_options, &sft_options, &field_options, &run_options})
    for (Option<O>& o : (*group)()) all.push_back(std::move(o));
  return all;
}

// Flags of one task given to another would be ignored: refused (Option::only_for).
void check_task_only(const ConvertOptions& o) {
  try {
    convert_option_table().check_applies(o);
  } catch (const options::OptionError& e) {
    throw Error(ErrorCode::kInvalidArgument, "", options::flag_name(e.option()) + " " + e.why());
  }
}

// Where the dataset goes and what makes it: given (whether the place is free is checked with the
// inputs, convert.cc).
void check_destination(const ConvertOptions& o) {
  if (o.out.empty()) throw Error(ErrorCode::kInvalidArgument, "", "--out is required");
  if (o.tokenizer_path.empty())
    throw Error(ErrorCode::kInvalidArgument, "", "--tokenizer is required");
}

}  // namespace

const options::OptionTable<ConvertOptions>& convert_option_table() {
  static const options::OptionTable<ConvertOptions> table(all_options());
  return table;
}

ConvertOptions resolve(ConvertOptions o) {
  check_destination(o);
  return resolve_defaults(std::move(o));
}

ConvertOptions resolve_defaults(ConvertOptions o) {
  check_task_only(o);
  convert_option_table().resolve(o);
  if (o.threads == 0) o.threads = available_cores();
  return o;
}

}  // namespace shardkit::shardify
