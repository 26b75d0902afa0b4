// The input files of a run: arguments expanded (directories recursively, globs such as
// "data/train-*.parquet", each in byte order of their paths, hidden entries skipped) and the
// contiguous slice that --part i/N converts.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace shardkit::shardify {

struct InputFile {
  std::string path;
  uint64_t bytes = 0;
};

// Throws Error(kIo) for a missing path and Error(kInvalidArgument) when nothing is found.
std::vector<InputFile> list_input_files(const std::vector<std::string>& inputs);

// One line for each file that `files` lists more than once (by another path, through a link, or
// as a file and again in its directory): the run converts its rows once per listing. Kept, not
// refused, since listing a file twice is also how some upsample it; empty when none repeats.
std::vector<std::string> repeated_input_notes(const std::vector<InputFile>& files);

// Throws Error(kInvalidArgument) when the output directory `out` lies where `inputs` are read:
// inside an input directory (unless under a hidden entry, which is skipped), or holding one of
// `files`. The next run would read the dataset back as input; --force would replace what is
// being read.
void check_out_apart_from_inputs(const std::string& out, const std::vector<std::string>& inputs,
                                 const std::vector<InputFile>& files);

// --part "i/N" with 0 <= i < N.
struct PartSpec {
  uint32_t index = 0;
  uint32_t count = 1;
};
PartSpec parse_part(const std::string& text);

// Files [first, second) of `total` that part `part` converts: contiguous, balanced by count.
std::pair<size_t, size_t> part_file_range(size_t total, PartSpec part);

}  // namespace shardkit::shardify
