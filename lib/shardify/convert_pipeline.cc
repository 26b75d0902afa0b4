#include "shardify/convert_pipeline.h"

#include <memory>
#include <vector>

#include "core/error.h"
#include "core/ordered_pipeline.h"
#include "shardify/example_batcher.h"
#include "shardify/example_reader.h"
#include "shardify/json_fields.h"
#include "shardify/record_assembler.h"

namespace shardkit::shardify {

ConvertResult start_result(const ConvertOptions& o, const ConvertInputs& in) {
  ConvertResult result;
  result.out = o.out;
  result.files = in.end_file - in.first_file;
  for (size_t i = in.first_file; i < in.end_file; ++i)
    result.bytes_in_compressed += in.files[i].bytes;
  return result;
}

WriterOptions writer_options(const ConvertOptions& o) {
  WriterOptions w;
  w.block_bytes = o.block_bytes;
  w.shard_bytes = o.shard_bytes;
  w.zstd_level = o.zstd_level;
  w.filter = o.filter;
  w.overwrite = o.force;
  return w;
}

namespace {

// The in-order stage after tokenizing: takes a batch's errors (fatal, or counted and listed),
// assembles its records and cuts them into the writer's blocks.
class RecordStage {
 public:
  RecordStage(const ConvertOptions& o, const ConvertInputs& in, const Encoding& e,
              DatasetWriter& writer, ConvertResult& result)
      : o_(o),
        in_(in),
        assembler_(make_record_assembler(e.layout, o.task)),
        record_size_(e.layout.record_size()),
        writer_(writer),
        result_(result) {}

  void operator()(const EncodedBatch& batch, std::vector<RawBlock>& blocks) {
    take_errors(batch);
    result_.stats.add(batch.stats);
    records_.clear();
    assembler_->add(batch, records_, result_.stats);
    if (batch.ends_file) assembler_->end_file(records_, result_.stats);
    if (!records_.empty()) writer_.cut(records_.data(), records_.size() / record_size_, blocks);
  }

 private:
  void take_errors(const EncodedBatch& batch) {
    for (const ExampleError& e : batch.errors) {
      if (o_.on_error == OnError::kFail || e.file_unusable)
        throw input_error(in_.files, first_error(e));
      if (e.after_damaged_text) throw DamagedTextRead{};
      ++result_.stats.skipped;
      // Lost input is listed even past the first few errors (lines it garbled may fill them).
      if (result_.first_errors.size() < o_.errors_reported || e.rest_of_file_lost)
        result_.first_errors.push_back(format_error(in_.files, e));
    }
  }

  // The error a reader that checked compressed files before use would have met first. Read
  // unchecked (ByteSource::Check::kWhileReading), a damaged member's text may come before the
  // damage is found, and a line of it look malformed: an error past the last line before the
  // damage is the damage's. Only compressed files are read again, on this error path alone.
  ExampleError first_error(const ExampleError& e) const {
    if (in_.reader.compressed_check != ByteSource::Check::kWhileReading || o_.rows) return e;
    const std::optional<StreamDamage> damage = find_stream_damage(in_.files[e.file_index].path);
    if (!damage || (e.line <= damage->line && !e.rest_of_file_lost)) return e;
    return {e.file_index, damage->line, "", damage->reason, true};
  }

  const ConvertOptions& o_;
  const ConvertInputs& in_;
  std::unique_ptr<RecordAssembler> assembler_;
  size_t record_size_;
  DatasetWriter& writer_;
  ConvertResult& result_;
  std::vector<unsigned char> records_;
};

// A text read from a mapped file is its file's only if the file did not shrink under it, which
// only a check after tokenizing can tell: the pages it lost read as zeros. A long line's pages
// then leave resident memory, as its buffer did when it was read (short lines' go behind the
// reader). The parts of a document cut into parts keep theirs, as its buffer did: releasing
// each 256 KiB part's cost a 60 MB document's conversion 3-4%.
void finish_mapped_texts(const std::vector<Example>& examples) {
  constexpr size_t kLongText = 1 << 20;
  for (const Example& ex : examples) {
    if (!ex.text_file) continue;
    ex.text_file->check_intact();
    if (ex.text_view.size() >= kLongText) ex.text_file->release_pages(ex.text_view);
  }
}

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

}  // namespace

void run_pipeline(const ConvertOptions& o, const ConvertInputs& in, const Encoding& e,
                  DatasetWriter& writer, ConvertResult& result, Clock::time_point t0,
                  const std::function<void(const ConvertProgress&)>& progress) {
  struct Batch {
    std::vector<Example> examples;
    EncodedBatch encoded;
    uint64_t input_bytes_done = 0;  // of the input files, once this batch was read
  };
  using BatchPtr = Batch*;
  PipelineItems<Batch> batches;
  PipelineItems<RawBlocks> blocks;
  // Packed lm documents are cut into parts that threads tokenize together (one large file).
  const bool cut_documents = o.task.task == Task::kLm && o.task.packing();
  ExampleBatcher batcher(in, cut_documents ? e.tokenizer.get() : nullptr);
  RecordStage records(o, in, e, writer, result);
  ConvertProgress prog;
  prog.input_bytes_total = result.bytes_in_compressed;
  const auto read = tbb::make_filter<void, BatchPtr>(tbb::filter_mode::serial_in_order,
                                                     [&](tbb::flow_control& fc) -> BatchPtr {
                                                       BatchPtr b = batches.make();
                                                       if (!batcher.next(b->examples, b->encoded)) {
                                                         batches.done(b);
                                                         fc.stop();
                                                         return nullptr;
                                                       }
                                                       b->input_bytes_done = batcher.bytes_done();
                                                       return b;
                                                     });
  const auto tokenize =
      tbb::make_filter<BatchPtr, BatchPtr>(tbb::filter_mode::parallel, [&e, &in](BatchPtr b) {
        read_unread_json(b->examples, in.reader);
        e.encoder.encode(b->examples, b->encoded);
        finish_mapped_texts(b->examples);
        b->examples.clear();  // a long text goes before its rows become records
        return b;
      });
  const auto to_records =
      tbb::make_filter<BatchPtr, WriterBlocks>(tbb::filter_mode::serial_in_order, [&](BatchPtr b) {
        WriterBlocks out = blocks.make();
        records(b->encoded, *out);
        if (progress) {
          prog.records = result.stats.records;
          prog.input_bytes_done = b->input_bytes_done;
          prog.seconds = seconds_since(t0);
          progress(prog);
        }
        batches.done(b);
        return out;
      });
  tbb::task_arena arena = pipeline_arena(o.threads);
  run_ordered_pipeline(arena, read & tokenize & to_records & encode_and_store(writer, blocks));
  result.bytes_in = batcher.text_bytes();
  // Rows handed in have no file: their JSON text is what was read, and what "stored" them.
  if (o.rows) result.bytes_in_compressed = result.bytes_in;
}

}  // namespace shardkit::shardify
