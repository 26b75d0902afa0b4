#include "shardify/convert.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>

#include "core/dataset_writer.h"
#include "core/error.h"
#include "core/json_text.h"
#include "shardify/ordered_pool.h"

namespace shardkit::shardify {
namespace fs = std::filesystem;

namespace {

struct Job {
  uint32_t file_index = 0;
  bool last_of_file = false;
  std::vector<Example> examples;
};

// Batches are sized so that a worker has a few milliseconds of tokenization per job.
constexpr size_t kBatchExamples = 512;
constexpr size_t kBatchTextBytes = 256 * 1024;

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

void check_task_and_format(Task task, InputFormat fmt) {
  if (task == Task::kQa && fmt != InputFormat::kSquad && fmt != InputFormat::kJsonl &&
      fmt != InputFormat::kParquet)
    throw Error(ErrorCode::kInvalidArgument, "", "--task qa reads SQuAD JSON, JSONL or Parquet");
  if (task != Task::kQa && fmt == InputFormat::kSquad)
    throw Error(ErrorCode::kInvalidArgument, "", "SQuAD JSON input is for --task qa");
  if ((task == Task::kCls || task == Task::kPair) && fmt == InputFormat::kText)
    throw Error(ErrorCode::kInvalidArgument, "",
                "plain text has no labels; --task cls and pair read jsonl, tsv or csv");
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
  if (o.task.task == Task::kQa) {
    r.qa = true;
    r.text_field = o.context_field;
    r.question_field = o.question_field;
    r.answers_field = o.answers_field;
  }
  return r;
}

// Every label of every input file (all parts), so that each part derives the same order.
LabelMap observe_labels(const std::vector<InputFile>& files, ReaderOptions r) {
  r.labels_only = true;
  std::set<std::string> seen;
  for (uint32_t i = 0; i < files.size(); ++i) {
    auto reader = ExampleReader::open(files[i].path, i, r);
    Example ex;
    while (reader->next(ex))
      if (ex.error.empty()) seen.insert(ex.label);
  }
  if (seen.empty()) throw Error(ErrorCode::kInput, "", "no labels found in the inputs");
  return LabelMap::from_observed(seen);
}

std::string task_json(const ConvertOptions& o, const RecordLayout& layout, const TaskEncoder& enc) {
  const TaskOptions& t = o.task;
  std::string j = "{\"name\":\"" + std::string(task_name(t.task)) +
                  "\",\"max_len\":" + std::to_string(t.max_len) + ",\"token_dtype\":\"" +
                  std::string(dtype_name(layout.token_dtype())) + "\"" +
                  ",\"pad_id\":" + std::to_string(enc.pad_id());
  if (t.task == Task::kLm) {
    j += ",\"pack\":" + std::string(t.pack ? "true" : "false");
    if (t.pack) {
      j += ",\"separator_id\":" + std::to_string(*enc.separator_id()) +
           ",\"position_ids\":" + std::string(t.position_ids ? "true" : "false") +
           ",\"packing\":\"each document is followed by separator_id; windows continue documents "
           "across "
           "records and restart at each input file\"";
    }
  }
  if (t.task == Task::kPair) j += ",\"truncation\":\"longest_first\"";
  if (t.task == Task::kQa)
    j += ",\"doc_stride\":" + std::to_string(t.doc_stride) +
         ",\"max_query_len\":" + std::to_string(t.max_query_len);
  return j + "}";
}

std::string source_json(const ConvertOptions& o, InputFormat fmt,
                        const std::vector<InputFile>& files) {
  std::string j = "{\"format\":\"" + std::string(input_format_name(fmt)) + "\"";
  const bool fields = fmt == InputFormat::kJsonl || fmt == InputFormat::kParquet;
  if (fields && o.task.task == Task::kQa) {
    j += ",\"context_field\":" + json_quote(o.context_field) +
         ",\"question_field\":" + json_quote(o.question_field) +
         ",\"answers_field\":" + json_quote(o.answers_field);
  } else if (fields || fmt == InputFormat::kTsv || fmt == InputFormat::kCsv) {
    j += ",\"text_field\":" + json_quote(o.text_field);
    if (o.task.task == Task::kPair) j += ",\"pair_field\":" + json_quote(o.pair_field);
    if (o.task.task == Task::kCls || o.task.task == Task::kPair)
      j += ",\"label_field\":" + json_quote(o.label_field);
  }
  if (!o.where.empty()) j += ",\"where\":" + nlohmann::ordered_json(o.where).dump();
  if ((fmt == InputFormat::kTsv || fmt == InputFormat::kCsv) && !o.quoting)
    j += ",\"quoting\":false";
  if (fmt == InputFormat::kText)
    j += std::string(",\"doc_sep\":\"") +
         (o.doc_separator == DocSeparator::kLine ? "line" : "blank") + "\"";
  j += ",\"files\":[";
  for (size_t i = 0; i < files.size(); ++i)
    j += (i ? "," : "") + std::string("{\"path\":") + json_quote(files[i].path) +
         ",\"bytes\":" + std::to_string(files[i].bytes) + "}";
  return j + "]}";
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

  const std::vector<InputFile> files = list_input_files(o.inputs);
  const InputFormat fmt = resolve_format(o, files);
  check_task_and_format(o.task.task, fmt);
  const ReaderOptions ropt = reader_options(o, fmt);

  auto tokenizer = tok::Tokenizer::from_file(o.tokenizer_path);
  LabelMap labels;
  const bool labelled = o.task.task == Task::kCls || o.task.task == Task::kPair;
  if (labelled) labels = o.labels ? LabelMap::from_list(*o.labels) : observe_labels(files, ropt);

  RecordLayout layout(o.task, tokenizer->vocab_size());
  TaskEncoder encoder(*tokenizer, layout, o.task, labelled ? &labels : nullptr);

  const PartSpec part = o.part.value_or(PartSpec{});
  const auto [first_file, end_file] = part_file_range(files.size(), part);

  WriterOptions wopt;
  wopt.block_bytes = o.block_bytes;
  wopt.shard_bytes = o.shard_bytes;
  wopt.zstd_level = o.zstd_level;
  wopt.filter = o.filter;
  wopt.overwrite = o.force;
  // zstd costs about a sixth of tokenizing (BENCHMARKS.md): one encoder per four workers.
  wopt.threads = std::max(1u, o.threads / 4);
  DatasetWriter writer(o.out, layout.schema(), wopt);

  ConvertResult result;
  result.out = o.out;
  result.files = end_file - first_file;
  for (size_t i = first_file; i < end_file; ++i) result.bytes_in += files[i].bytes;

  Packer packer(layout, o.task, encoder.pad_id());
  const bool packing = o.task.task == Task::kLm && o.task.pack;

  size_t file = first_file;
  std::unique_ptr<ExampleReader> reader;
  uint64_t bytes_before_file = 0;
  ConvertProgress prog;
  prog.input_bytes_total = result.bytes_in;

  auto produce = [&](Job& job) -> bool {
    for (;;) {
      if (!reader) {
        if (file >= end_file) return false;
        reader = ExampleReader::open(files[file].path, static_cast<uint32_t>(file), ropt);
      }
      job.file_index = static_cast<uint32_t>(file);
      size_t text_bytes = 0;
      Example ex;
      while (job.examples.size() < kBatchExamples && text_bytes < kBatchTextBytes) {
        if (!reader->next(ex)) {
          job.last_of_file = true;
          break;
        }
        text_bytes += ex.text.size() + ex.text_pair.size() + 64 * ex.questions.size();
        job.examples.push_back(std::move(ex));
      }
      if (job.last_of_file) {
        bytes_before_file += files[file].bytes;
        reader.reset();
        ++file;
      }
      if (!job.examples.empty() || job.last_of_file) return true;
    }
  };
  auto work = [&](Job& job) -> BatchOutput {
    BatchOutput out;
    out.file_index = job.file_index;
    for (const Example& ex : job.examples) encoder.encode(ex, out);
    if (job.last_of_file) out.lm_doc_ends.push_back(UINT32_MAX);  // marks the end of the file
    return out;
  };
  auto consume = [&](BatchOutput& out) {
    for (const ExampleError& e : out.errors) {
      if (o.on_error == OnError::kFail) {
        std::string where = files[e.file_index].path;
        if (e.line) where += ":" + std::to_string(e.line);
        throw Error(ErrorCode::kInput, where, (e.where.empty() ? "" : e.where + ": ") + e.reason);
      }
      ++out.stats.skipped;
      if (result.first_errors.size() < o.errors_reported)
        result.first_errors.push_back(format_error(files, e));
    }
    const bool file_ends = !out.lm_doc_ends.empty() && out.lm_doc_ends.back() == UINT32_MAX;
    if (file_ends) out.lm_doc_ends.pop_back();
    if (packing) {
      packer.add(out.lm_ids, out.lm_doc_ends, out.records, out.record_count, out.stats);
      if (file_ends) packer.flush(out.records, out.record_count, out.stats);
    }
    if (out.record_count) writer.append_many(out.records.data(), out.record_count);
    result.stats.add(out.stats);
    if (progress) {
      prog.records = result.stats.records;
      prog.input_bytes_done = bytes_before_file + (reader ? reader->file_bytes_consumed() : 0);
      prog.seconds = elapsed();
      progress(prog);
    }
  };
  run_ordered<Job, BatchOutput>(std::max(1u, o.threads), 2 * std::max(1u, o.threads) + 2, produce,
                                work, consume);

  writer.set_metadata("tokenizer", tokenizer->describe_json());
  writer.set_metadata("task", task_json(o, layout, encoder));
  if (labelled) writer.set_metadata("labels", labels.to_json());
  writer.set_metadata("source", source_json(o, fmt, files));
  writer.set_metadata("stats", result.stats.to_json());
  if (o.part)
    writer.set_metadata("part", "{\"index\":" + std::to_string(part.index) +
                                    ",\"count\":" + std::to_string(part.count) +
                                    ",\"first_file\":" + std::to_string(first_file) +
                                    ",\"end_file\":" + std::to_string(end_file) + "}");
  Manifest m = writer.finish();
  result.bytes_out = m.bytes_on_disk();
  result.seconds = elapsed();
  return result;
}

}  // namespace shardkit::shardify
