// The converter's ordered pipeline: batches of examples read in input order, tokenized on any
// thread, assembled into records and cut into blocks in order, compressed on any thread and
// stored in order, so that the bytes do not depend on the thread count.
#pragma once

#include <chrono>
#include <functional>
#include <stdexcept>

#include "core/dataset_writer.h"
#include "shardify/conversion_encoding.h"
#include "shardify/convert.h"
#include "shardify/convert_inputs.h"

namespace shardkit::shardify {

// The result before the pipeline runs: destination, files and their bytes.
ConvertResult start_result(const ConvertOptions& o, const ConvertInputs& in);
WriterOptions writer_options(const ConvertOptions& o);

// Thrown by run_pipeline under --on-error skip when a compressed file read unchecked
// (ByteSource::Check::kWhileReading) turns out damaged: records may already hold text of the
// damaged member or frame, which a file checked before use drops whole. convert() then reads
// the inputs again, each checked before use; a runtime_error only so that it could never end a
// program without a word.
struct DamagedTextRead : std::runtime_error {
  DamagedTextRead() : std::runtime_error("a damaged compressed file was read unchecked") {}
};

// Runs the pipeline on o.threads threads (this one included) into `writer`, counting in
// `result`; `progress`, when set, hears of every batch stored, timed from `started`.
void run_pipeline(const ConvertOptions& o, const ConvertInputs& in, const Encoding& e,
                  DatasetWriter& writer, ConvertResult& result,
                  std::chrono::steady_clock::time_point started,
                  const std::function<void(const ConvertProgress&)>& progress);

}  // namespace shardkit::shardify
