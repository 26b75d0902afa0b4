// The converter's first stage: which inputs a conversion reads (files, or rows handed in), in
// which format, with which reader options, and which of them this --part converts.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "shardify/convert.h"

namespace shardkit::shardify {

// Opens input i: a file by its format, or the rows handed in.
using OpenInput = std::function<std::unique_ptr<ExampleReader>(size_t, const ReaderOptions&)>;

struct ConvertInputs {
  std::vector<InputFile> files;  // all of them, every part's
  InputFormat format = InputFormat::kJsonl;
  ReaderOptions reader;
  OpenInput open;
  PartSpec part;
  size_t first_file = 0, end_file = 0;  // this part's files: [first_file, end_file)
};

// Checks the inputs `files` of resolved options `o` (which must outlive the result): their
// format, and which of them this part converts. Throws Error(kInvalidArgument) for a format
// that does not fit the task or the options.
ConvertInputs open_inputs(const ConvertOptions& o, std::vector<InputFile> files);

}  // namespace shardkit::shardify
