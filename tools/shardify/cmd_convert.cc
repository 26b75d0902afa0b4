// shardify --input PATH... --task lm|cls|pair|qa|sft --tokenizer FILE --out DIR [flags]: the
// default command, run when no subcommand is named.
#include <cstdio>
#include <thread>

#include "core/block_codec.h"
#include "core/error.h"
#include "core/progress.h"
#include "output_location.h"
#include "progress_options.h"
#include "shardify/commands.h"
#include "shardify/convert.h"
#include "shardify/part_from_env.h"

namespace {

using namespace shardkit::shardify;

struct ConvertArgs {
  std::vector<std::string> inputs;
  std::string format, task = "lm", tokenizer, out, labels, doc_sep = "file", on_error = "fail",
                      part;
  std::string text_field = "text", pair_field = "text_pair", label_field = "label", filter = "none";
  std::string context_field = "context", question_field = "question", answers_field = "answers";
  std::string where;
  std::string prompt_field = "prompt", response_field = "response", messages_field, chat_template;
  std::string train_on = "assistant", truncation = "drop";
  bool pack = false;
  uint32_t max_len = 0, doc_stride = 128, max_query_len = 64;
  bool no_quoting = false;
  bool no_pack = false, position_ids = false, force = false, json = false, allow_empty = false;
  unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  int zstd_level = 3;
  uint64_t block_size = 256 * 1024, shard_size = 256ull << 20;
  shardkit::ProgressOptions progress;
};

void run_convert(const ConvertArgs& a) {
  ConvertOptions o;
  o.inputs = a.inputs;
  if (o.inputs.empty())
    throw shardkit::Error(shardkit::ErrorCode::kInvalidArgument, "",
                          "--input is required (see --help)");
  if (!a.format.empty()) o.format = parse_input_format(a.format);
  o.text_field = a.text_field;
  o.pair_field = a.pair_field;
  o.label_field = a.label_field;
  o.context_field = a.context_field;
  o.question_field = a.question_field;
  o.answers_field = a.answers_field;
  o.quoting = !a.no_quoting;
  o.where = a.where;
  o.doc_separator = parse_doc_separator(a.doc_sep);
  o.task.task = parse_task(a.task);
  o.task.max_len = a.max_len ? a.max_len : (o.task.task == Task::kQa ? 384 : 512);
  o.task.pack = o.task.task == Task::kSft ? a.pack : !a.no_pack;
  if (a.pack && o.task.task != Task::kSft)
    throw shardkit::Error(shardkit::ErrorCode::kInvalidArgument, "",
                          "--pack is for --task sft (lm packs unless --no-pack)");
  o.prompt_field = a.prompt_field;
  o.response_field = a.response_field;
  o.task.messages = !a.messages_field.empty();
  if (o.task.messages) o.messages_field = a.messages_field;
  o.task.chat_template = a.chat_template;
  o.task.train_on = parse_train_on(a.train_on);
  o.task.sft_truncation = parse_sft_truncation(a.truncation);
  o.task.position_ids = a.position_ids;
  o.task.doc_stride = a.doc_stride;
  o.task.max_query_len = a.max_query_len;
  o.tokenizer_path = a.tokenizer;
  if (a.out.empty())
    throw shardkit::Error(shardkit::ErrorCode::kInvalidArgument, "",
                          "--out is required (a directory or s3://bucket/prefix)");
  shardify_cli::OutputLocation out(a.out, a.force, std::filesystem::temp_directory_path());
  o.out = out.local();
  if (!a.labels.empty()) o.labels = a.labels;
  o.threads = std::max(1u, a.threads);
  o.on_error = a.on_error == "skip" ? OnError::kSkip : OnError::kFail;
  if (!a.part.empty()) o.part = resolve_part(a.part);
  o.force = a.force;
  o.allow_empty = a.allow_empty;
  o.zstd_level = a.zstd_level;
  o.block_bytes = static_cast<uint32_t>(a.block_size);
  o.shard_bytes = a.shard_size;
  o.filter = *shardkit::parse_block_filter(a.filter);  // checked by --filter's IsMember

  shardkit::ProgressReporter reporter("shardify", shardkit::ProgressUnit::bytes(), a.progress);
  std::function<void(const ConvertProgress&)> progress;
  if (reporter.enabled())
    progress = [&reporter](const ConvertProgress& p) {
      reporter.update(p.input_bytes_done, p.input_bytes_total,
                      shardkit::count_text(p.records) + " records");
    };
  ConvertResult r = convert(o, progress);
  reporter.finish();
  out.publish();
  r.out = a.out;
  if (a.json)
    std::printf("%s\n", r.to_json().c_str());
  else
    std::printf("%s", r.to_text().c_str());
}

const shardify_cli::RegisterCommand kConvert([](CLI::App& app) {
  auto a = std::make_shared<ConvertArgs>();
  app.add_option("--input,-i", a->inputs,
                 "Input files, directories or globs such as 'data/train-*.parquet' (.gz/.zst read "
                 "transparently)");
  app.add_option("--format", a->format, "Input format; inferred from the file name when omitted")
      ->check(CLI::IsMember({"jsonl", "text", "tsv", "csv", "squad", "parquet"}));
  app.add_option("--where", a->where,
                 "parquet: keep the rows where this DuckDB SQL predicate over the file's columns "
                 "holds, e.g. \"lang = 'en' AND length(text) > 100\"");
  app.add_option("--task", a->task,
                 "Record layout: lm (packed windows), cls, pair, qa or sft (loss-masked chat)")
      ->capture_default_str()
      ->check(CLI::IsMember({"lm", "cls", "pair", "qa", "sft"}));
  app.add_option("--tokenizer", a->tokenizer,
                 "tokenizer.json, WordPiece vocab.txt or GPT-2 encoder.json");
  app.add_option(
      "--out,-o", a->out,
      "Dataset directory to create (published atomically), or s3://bucket/prefix (built in "
      "$TMPDIR, then uploaded: shards first, manifest last)");
  app.add_option("--text-field", a->text_field,
                 "JSONL/Parquet dotted path or CSV/TSV column of the text")
      ->capture_default_str();
  app.add_option("--pair-field", a->pair_field, "Field of the second text (--task pair)")
      ->capture_default_str();
  app.add_option("--label-field", a->label_field, "Field of the label (--task cls, pair)")
      ->capture_default_str();
  app.add_option("--prompt-field", a->prompt_field, "sft: field of the prompt")
      ->capture_default_str();
  app.add_option("--response-field", a->response_field, "sft: field of the response (trained on)")
      ->capture_default_str();
  app.add_option("--messages-field", a->messages_field,
                 "sft, JSONL: field of an OpenAI-style [{role, content}] list (instead of "
                 "prompt/response); needs --chat-template");
  app.add_option("--chat-template", a->chat_template,
                 "sft: render with the chat_template of this HF tokenizer_config.json (Python 3 "
                 "and python3-jinja2); without it: prompt ids + response ids + end-of-text");
  app.add_option("--train-on", a->train_on,
                 "sft: loss on every assistant turn, the last one, or all tokens")
      ->capture_default_str()
      ->check(CLI::IsMember({"assistant", "last", "all"}));
  app.add_option("--truncation", a->truncation,
                 "sft: a conversation over --max-len is dropped, or loses its oldest tokens "
                 "(left) while every trained token still fits")
      ->capture_default_str()
      ->check(CLI::IsMember({"drop", "left"}));
  app.add_flag("--pack", a->pack,
               "sft: pack whole conversations into rows (their starts are stored, so the loader "
               "gives position_ids/cu_seqlens per conversation)");
  app.add_option("--context-field", a->context_field, "qa from JSONL: field of the context")
      ->capture_default_str();
  app.add_option("--question-field", a->question_field, "qa from JSONL: field of the question")
      ->capture_default_str();
  app.add_option(
         "--answers-field", a->answers_field,
         "qa from JSONL: {\"text\": [...], \"answer_start\": [...]} as HF datasets has it, or a "
         "SQuAD-style list; empty means unanswerable")
      ->capture_default_str();
  app.add_option(
      "--labels", a->labels,
      "Comma-separated label names in index order; otherwise numeric order when all labels are "
      "integers, else byte-wise lexicographic order");
  app.add_option("--max-len", a->max_len, "Tokens per record (default 512; 384 for qa)");
  app.add_flag(
      "--no-quoting", a->no_quoting,
      "tsv/csv: quotes are ordinary characters (GLUE-style TSV); default: RFC 4180 quoting");
  app.add_flag("--no-pack", a->no_pack,
               "lm: one truncated/padded record per document instead of packing");
  app.add_flag("--position-ids", a->position_ids,
               "lm: also store position_ids that restart at every document inside a window");
  app.add_option("--doc-stride", a->doc_stride, "qa: tokens shared by consecutive context windows")
      ->capture_default_str();
  app.add_option("--max-query-len", a->max_query_len, "qa: question tokens kept")
      ->capture_default_str();
  app.add_option("--doc-sep", a->doc_sep,
                 "text: what one document is: 'file' (a whole file), 'line' (each line) or "
                 "'blank' (blocks separated by blank lines)")
      ->capture_default_str()
      ->check(CLI::IsMember({"file", "line", "blank"}));
  app.add_option("--threads,-j", a->threads, "Tokenizing threads (default: all cores)");
  app.add_option("--on-error", a->on_error,
                 "fail: stop at the first bad example; skip: count and go on")
      ->capture_default_str()
      ->check(CLI::IsMember({"fail", "skip"}));
  app.add_option(
      "--part", a->part,
      "Convert only part i of N (0 <= i < N) of the input files; see 'merge'. 'auto' takes "
      "i/N from a Slurm array job (SLURM_ARRAY_TASK_ID/_MIN/_COUNT); 'auto/N' also "
      "from a Kubernetes Indexed Job (JOB_COMPLETION_INDEX, N = completions)");
  app.add_flag("--force", a->force, "Replace an existing dataset at --out");
  app.add_flag("--allow-empty", a->allow_empty,
               "Write a dataset even when no record results (otherwise an error)");
  app.add_flag("--json", a->json, "Print the summary as one JSON object");
  shardkit::tools::add_progress_options(&app, a->progress);
  app.add_option("--zstd-level", a->zstd_level, "zstd level of the blocks (1..22)")
      ->capture_default_str();
  app.add_option("--block-size", a->block_size, "Uncompressed bytes per block")
      ->capture_default_str();
  app.add_option("--shard-size", a->shard_size, "Stored bytes after which a shard is closed")
      ->capture_default_str();
  app.add_option("--filter", a->filter,
                 "Block filter before zstd: none (best for token ids) or byteplanes")
      ->capture_default_str()
      ->check(CLI::IsMember({"byteplanes", "none"}));
  app.callback([a, &app] {
    if (!app.get_subcommands().empty()) return;
    run_convert(*a);
  });
});

}  // namespace
