#include "shardify/convert.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <memory>
#include <set>
#include <span>

#include "core/dataset_writer.h"
#include "core/error.h"
#include "core/ordered_pipeline.h"
#include "shardify/chat_renderer.h"
#include "shardify/conversation_packer.h"
#include "shardify/example_batcher.h"
#include "shardify/packer.h"
#include "shardify/record_layout.h"
#include "shardify/task_encoder.h"

namespace shardkit::shardify {
namespace fs = std::filesystem;

namespace {

InputFormat resolve_format(const ConvertOptions& o, const std::vector<InputFile>& files) {
  if (o.format) return *o.format;
  auto first = infer_input_format(files.front().path);
  if (!first)
    throw Error(ErrorCode::kInvalidArgument, files.front().path,
                "cannot infer the input format from the file name; pass --format");
  for (const auto& f : files) {
    auto other = infer_input_format(f.path);
    if (other && *other != *first)
      throw Error(ErrorCode::kInvalidArgument, f.path,
                  std::string("input files have different formats (") + input_format_name(*first) +
                      " and " + input_format_name(*other) + "); pass --format");
  }
  return *first;
}

void check_sft_options(const TaskOptions& t) {
  if (t.task != Task::kSft &&
      (t.messages || !t.chat_template.empty() || t.train_on != TrainOn::kAssistant ||
       t.sft_truncation != SftTruncation::kDrop))
    throw Error(ErrorCode::kInvalidArgument, "",
                "--messages-field, --chat-template, --train-on and --truncation are for "
                "--task sft");
}

void check_task_and_format(Task task, InputFormat fmt) {
  if (task == Task::kQa && fmt != InputFormat::kSquad && fmt != InputFormat::kJsonl &&
      fmt != InputFormat::kParquet)
    throw Error(ErrorCode::kInvalidArgument, "", "--task qa reads SQuAD JSON, JSONL or Parquet");
  if (task != Task::kQa && fmt == InputFormat::kSquad)
    throw Error(ErrorCode::kInvalidArgument, "", "SQuAD JSON input is for --task qa");
  if ((task == Task::kCls || task == Task::kPair) && fmt == InputFormat::kText)
    throw Error(ErrorCode::kInvalidArgument, "",
                "plain text has no labels; --task cls and pair read jsonl, tsv or csv");
  if (task == Task::kSft && fmt == InputFormat::kText)
    throw Error(
        ErrorCode::kInvalidArgument, "",
        "plain text has no prompt and response; --task sft reads jsonl, parquet, tsv or csv");
}

ReaderOptions reader_options(const ConvertOptions& o, InputFormat fmt) {
  ReaderOptions r;
  r.format = fmt;
  r.text_field = o.text_field;
  r.doc_separator = o.doc_separator;
  r.quoting = o.quoting;
  if (!o.where.empty() && fmt != InputFormat::kParquet)
    throw Error(ErrorCode::kInvalidArgument, "", "--where filters Parquet input only");
  r.where = o.where;
  r.decode_threads = std::max(1u, o.threads / 2);
  if (o.task.task == Task::kPair) r.pair_field = o.pair_field;
  if (o.task.task == Task::kCls || o.task.task == Task::kPair) r.label_field = o.label_field;
  if (o.task.task == Task::kSft) {
    if (o.task.messages) {
      if (fmt != InputFormat::kJsonl)
        throw Error(ErrorCode::kInvalidArgument, "",
                    "--messages-field reads JSONL (a list of {role, content} objects per line)");
      r.messages_field = o.messages_field;
    } else {
      r.text_field = o.prompt_field;
      r.pair_field = o.response_field;
    }
  }
  if (o.task.task == Task::kQa) {
    r.qa = true;
    r.text_field = o.context_field;
    r.question_field = o.question_field;
    r.answers_field = o.answers_field;
  }
  return r;
}

// Every label of every input file (all parts), so that each part derives the same order.
LabelMap observe_labels(size_t inputs, const OpenInput& open, ReaderOptions r) {
  r.labels_only = true;
  std::set<std::string> seen;
  for (size_t i = 0; i < inputs; ++i) {
    auto reader = open(i, r);
    Example ex;
    while (reader->next(ex))
      if (ex.error.empty()) seen.insert(ex.label);
  }
  if (seen.empty()) throw Error(ErrorCode::kInput, "", "no labels found in the inputs");
  return LabelMap::from_observed(seen);
}

DatasetInfo describe_conversion(const ConvertOptions& o, InputFormat fmt,
                                const std::vector<InputFile>& files,
                                const tok::Tokenizer& tokenizer, const TaskEncoder& encoder,
                                const RecordLayout& layout, const LabelMap* labels,
                                const ChatRenderer* renderer) {
  DatasetInfo info;
  const TaskOptions& t = o.task;
  info.task.name = task_name(t.task);
  info.task.max_len = t.max_len;
  info.task.padding_id = encoder.padding_id();
  if (t.packing()) {
    info.task.packed = true;
    if (t.task == Task::kLm) info.task.separator_id = encoder.separator_id();
  }
  if (t.task == Task::kSft) {
    info.task.truncation = sft_truncation_name(t.sft_truncation);
    info.task.train_on = train_on_name(t.train_on);
    if (renderer) info.task.chat_template = renderer->fingerprint();
  }
  if (t.task == Task::kPair) info.task.truncation = "longest_first";
  if (t.task == Task::kQa) {
    info.task.doc_stride = t.doc_stride;
    info.task.max_query_len = t.max_query_len;
  }
  info.fields = layout.fields();
  info.tokenizer = tokenizer.describe();
  if (labels) info.labels = {labels->names(), labels->order()};
  info.source.format = input_format_name(fmt);
  if (t.task == Task::kQa && (fmt == InputFormat::kJsonl || fmt == InputFormat::kParquet)) {
    info.source.columns = {
        {"context", o.context_field}, {"question", o.question_field}, {"answers", o.answers_field}};
  } else if (t.task == Task::kSft) {
    if (t.messages)
      info.source.columns["messages"] = o.messages_field;
    else
      info.source.columns = {{"prompt", o.prompt_field}, {"response", o.response_field}};
  } else if (fmt != InputFormat::kText && fmt != InputFormat::kSquad) {
    info.source.columns["text"] = o.text_field;
    if (t.task == Task::kPair) info.source.columns["pair"] = o.pair_field;
    if (task_has_labels(t.task)) info.source.columns["label"] = o.label_field;
  }
  if (fmt == InputFormat::kText) info.source.doc_sep = doc_separator_name(o.doc_separator);
  if (fmt == InputFormat::kTsv || fmt == InputFormat::kCsv) info.source.quoting = o.quoting;
  info.source.where = o.where;
  for (const InputFile& f : files) info.source.files.push_back({f.path, f.bytes});
  return info;
}

}  // namespace

std::string format_error(const std::vector<InputFile>& files, const ExampleError& e) {
  std::string s = e.file_index < files.size() ? files[e.file_index].path : "?";
  if (e.line) s += ":" + std::to_string(e.line);
  s += ": ";
  if (!e.where.empty()) s += e.where + ": ";
  return s + e.reason;
}

ConvertResult convert(const ConvertOptions& o,
                      const std::function<void(const ConvertProgress&)>& progress) {
  const auto t0 = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  if (o.out.empty()) throw Error(ErrorCode::kInvalidArgument, "", "--out is required");
  if (fs::exists(o.out) && !o.force)
    throw Error(ErrorCode::kExists, o.out, "already exists; pass --force to replace it");
  if (o.tokenizer_path.empty())
    throw Error(ErrorCode::kInvalidArgument, "", "--tokenizer is required");

  if (o.rows && (!o.inputs.empty() || o.part || (o.format && *o.format != InputFormat::kJsonl)))
    throw Error(ErrorCode::kInvalidArgument, "",
                "rows handed in are one input read as JSONL: no input files, format or part");
  const std::vector<InputFile> files =
      o.rows ? std::vector<InputFile>{{o.rows_name, 0}} : list_input_files(o.inputs);
  const InputFormat fmt = o.rows ? InputFormat::kJsonl : resolve_format(o, files);
  check_task_and_format(o.task.task, fmt);
  check_sft_options(o.task);
  const ReaderOptions ropt = reader_options(o, fmt);
  const OpenInput open_input = [&](size_t i, const ReaderOptions& r) {
    const auto index = static_cast<uint32_t>(i);
    return o.rows ? make_row_reader(o.rows(), index, r)
                  : ExampleReader::open(files[i].path, index, r);
  };

  auto tokenizer = tok::Tokenizer::from_file(o.tokenizer_path);
  LabelMap labels;
  const bool labelled = task_has_labels(o.task.task);
  if (labelled)
    labels =
        o.labels ? LabelMap::from_list(*o.labels) : observe_labels(files.size(), open_input, ropt);
  std::unique_ptr<ChatRenderer> renderer;
  if (o.task.task == Task::kSft && !o.task.chat_template.empty())
    renderer = std::make_unique<ChatRenderer>(
        o.task.chat_template, o.task.train_on == TrainOn::kAll    ? ChatRenderer::Spans::kNone
                              : o.task.train_on == TrainOn::kLast ? ChatRenderer::Spans::kLast
                                                                  : ChatRenderer::Spans::kAll);
  const TaskEncoder encoder(*tokenizer, o.task, labelled ? &labels : nullptr, renderer.get());
  const RecordLayout layout(o.task, tokenizer->vocab_size(), encoder.padding_id());
  Packer packer(layout, o.task.position_ids);
  ConversationPacker conversations(layout);

  const PartSpec part = o.part.value_or(PartSpec{});
  const auto [first_file, end_file] = part_file_range(files.size(), part);
  ConvertResult result;
  result.out = o.out;
  result.files = end_file - first_file;
  for (size_t i = first_file; i < end_file; ++i) result.bytes_in_compressed += files[i].bytes;

  WriterOptions wopt;
  wopt.block_bytes = o.block_bytes;
  wopt.shard_bytes = o.shard_bytes;
  wopt.zstd_level = o.zstd_level;
  wopt.filter = o.filter;
  wopt.overwrite = o.force;
  DatasetWriter writer(o.out, layout.schema(), wopt);

  std::vector<unsigned char> records;
  ConvertProgress prog;
  prog.input_bytes_total = result.bytes_in_compressed;
  // Packed lm documents are cut into parts that threads tokenize together (one large file).
  const bool cut_documents = o.task.task == Task::kLm && o.task.packing();
  ExampleBatcher batcher(files, first_file, end_file, ropt, open_input,
                         cut_documents ? tokenizer.get() : nullptr);

  // Turns a tokenized batch into records in input order and cuts them into the writer's blocks.
  auto write = [&](const EncodedBatch& batch, uint64_t input_bytes_done,
                   std::vector<RawBlock>& blocks) {
    for (const ExampleError& e : batch.errors) {
      if (o.on_error == OnError::kFail) {
        std::string where = files[e.file_index].path;
        if (e.line) where += ":" + std::to_string(e.line);
        throw Error(ErrorCode::kInput, where, (e.where.empty() ? "" : e.where + ": ") + e.reason);
      }
      ++result.stats.skipped;
      // Lost input is listed even past the first few errors (lines it garbled may fill them).
      if (result.first_errors.size() < o.errors_reported || e.rest_of_file_lost)
        result.first_errors.push_back(format_error(files, e));
    }
    result.stats.add(batch.stats);
    records.clear();
    if (o.task.packing() && o.task.task == Task::kSft) {
      conversations.add(batch, records, result.stats);
      if (batch.ends_file) conversations.end_file(records, result.stats);
    } else if (o.task.packing()) {
      packer.add(batch, records, result.stats);
      if (batch.ends_file) packer.end_file(records, result.stats);
    } else if (o.task.task == Task::kSft) {
      const size_t rs = layout.record_size();
      records.resize(batch.rows.size() * rs);
      for (size_t i = 0; i < batch.rows.size(); ++i) {
        const EncodedRow& row = batch.rows[i];
        std::span<const uint8_t> mask;
        if (!batch.loss_mask.empty()) mask = {batch.loss_mask.data() + row.first, row.count};
        layout.write_conversations(records.data() + i * rs,
                                   {batch.ids.data() + row.first, row.count}, mask, {});
        result.stats.tokens += row.count;
      }
      result.stats.records += batch.rows.size();
    } else {
      const size_t rs = layout.record_size();
      records.resize(batch.rows.size() * rs);
      const bool segments = !batch.type_ids.empty();
      for (size_t i = 0; i < batch.rows.size(); ++i) {
        const EncodedRow& row = batch.rows[i];
        std::span<const uint8_t> types;
        if (segments) types = {batch.type_ids.data() + row.first, row.count};
        layout.write(records.data() + i * rs, {batch.ids.data() + row.first, row.count}, types,
                     row);
        result.stats.tokens += std::min(row.count, layout.max_len());
      }
      result.stats.records += batch.rows.size();
    }
    if (!records.empty()) writer.cut(records.data(), records.size() / layout.record_size(), blocks);
    if (progress) {
      prog.records = result.stats.records;
      prog.input_bytes_done = input_bytes_done;
      prog.seconds = elapsed();
      progress(prog);
    }
  };

  // One ordered pipeline on o.threads threads, this one included: batches of examples read in
  // order, tokenized on any thread, turned into records and cut into blocks in order, blocks
  // compressed on any thread and stored in order. Output bytes do not depend on the threads.
  struct Batch {
    std::vector<Example> examples;
    EncodedBatch encoded;
    uint64_t input_bytes_done = 0;  // of the input files, once this batch was read
  };
  using BatchPtr = std::unique_ptr<Batch>;
  const auto read = tbb::make_filter<void, BatchPtr>(tbb::filter_mode::serial_in_order,
                                                     [&](tbb::flow_control& fc) -> BatchPtr {
                                                       auto b = std::make_unique<Batch>();
                                                       if (!batcher.next(b->examples, b->encoded)) {
                                                         fc.stop();
                                                         return nullptr;
                                                       }
                                                       b->input_bytes_done = batcher.bytes_done();
                                                       return b;
                                                     });
  const auto tokenize =
      tbb::make_filter<BatchPtr, BatchPtr>(tbb::filter_mode::parallel, [&encoder](BatchPtr b) {
        encoder.encode(b->examples, b->encoded);
        b->examples.clear();  // a long text goes before its rows become records
        return b;
      });
  const auto to_records =
      tbb::make_filter<BatchPtr, WriterBlocks>(tbb::filter_mode::serial_in_order, [&](BatchPtr b) {
        auto blocks = std::make_unique<std::vector<RawBlock>>();
        write(b->encoded, b->input_bytes_done, *blocks);
        return blocks;
      });
  tbb::task_arena arena = pipeline_arena(o.threads);
  run_ordered_pipeline(arena, read & tokenize & to_records & encode_and_store(writer));
  result.bytes_in = batcher.text_bytes();
  // Rows handed in have no file: their JSON text is what was read, and what "stored" them.
  if (o.rows) result.bytes_in_compressed = result.bytes_in;

  if (result.stats.records == 0 && !o.allow_empty) {
    const std::string inputs =
        result.files == 1 ? files[first_file].path : std::to_string(result.files) + " input files";
    std::string why = std::to_string(result.stats.examples) + " examples, " +
                      std::to_string(result.stats.skipped) + " skipped";
    if (!result.first_errors.empty()) why += ", first: " + result.first_errors[0];
    throw Error(ErrorCode::kInput, inputs,
                "no records to write (" + why +
                    "); check the input and --text-field, or pass --allow-empty");
  }

  DatasetInfo info = describe_conversion(o, fmt, files, *tokenizer, encoder, layout,
                                         labelled ? &labels : nullptr, renderer.get());
  if (o.rows) {
    info.source.format = "rows";
    info.source.files.front().bytes = result.bytes_in;
  }
  info.stats = result.stats;
  if (o.part)
    info.part = PartInfo{part.index,    part.count,   first_file, end_file,
                         o.shard_bytes, o.zstd_level, o.filter};
  writer.set_info(std::move(info));
  Manifest m = writer.finish();
  result.bytes_out = m.bytes_on_disk();
  result.seconds = elapsed();
  return result;
}

}  // namespace shardkit::shardify
