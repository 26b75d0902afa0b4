// convert() is a sequence of stages, each in a file of its own: resolve and check the options
// (convert_option_table.cc), list and open the inputs (input_files.cc, convert_inputs.cc), load
// what encodes them (conversion_encoding.cc), run the ordered pipeline that reads, tokenizes,
// assembles and stores (convert_pipeline.cc), then describe and publish the dataset
// (convert_publish.cc).
#include "shardify/convert.h"

#include <chrono>

#include "core/staged_directory.h"

#include "shardify/conversion_encoding.h"
#include "shardify/convert_inputs.h"
#include "shardify/convert_option_table.h"
#include "shardify/convert_pipeline.h"
#include "shardify/convert_publish.h"

namespace shardkit::shardify {
namespace {

// `progress`, telling that the run started again: its figures went back to the start.
std::function<void(const ConvertProgress&)> said_again(
    const std::function<void(const ConvertProgress&)>& progress) {
  return [progress](ConvertProgress p) {
    p.read_again_checked = true;
    progress(p);
  };
}

// The files to read; refused before any work when the output would be among them, or would
// replace what it may not.
std::vector<InputFile> input_files(const ConvertOptions& o) {
  check_output_place(o.out, o.force);
  if (o.rows) return {{o.rows_name, 0}};
  std::vector<InputFile> files = list_input_files(o.inputs);
  check_out_apart_from_inputs(o.out, o.inputs, files);
  return files;
}

}  // namespace

ConvertResult convert(const ConvertOptions& options,
                      const std::function<void(const ConvertProgress&)>& progress) {
  const auto started = std::chrono::steady_clock::now();
  const ConvertOptions o = resolve(options);
  std::vector<InputFile> files = input_files(o);
  const std::vector<std::string> notes = repeated_input_notes(files);
  ConvertInputs in = open_inputs(o, std::move(files));
  const Encoding encoding(o, in);
  // Compressed files are read unchecked. A damaged one under --on-error skip starts the run
  // again with every file checked before use (convert_pipeline.h: DamagedTextRead); the first
  // run's writer is gone by then, and its staging directory with it.
  auto run_started = started;  // progress figures count from the run's own start
  for (bool again = false;; again = true) {
    try {
      ConvertResult result = start_result(o, in);
      DatasetWriter writer(o.out, encoding.layout.schema(), writer_options(o));
      run_pipeline(o, in, encoding, writer, result, run_started,
                   again && progress ? said_again(progress) : progress);
      check_not_empty(o, in, result);
      publish(o, in, encoding, writer, result);
      result.read_again_checked = again;
      result.notes = notes;
      result.seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
      return result;
    } catch (const DamagedTextRead&) {
      if (again) throw;
      in.reader.compressed_check = ByteSource::Check::kBeforeUse;
      run_started = std::chrono::steady_clock::now();
    }
  }
}

}  // namespace shardkit::shardify
