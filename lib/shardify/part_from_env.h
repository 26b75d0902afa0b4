// `--part auto` and `--part auto/N`: which part of a fan-out this process converts, taken from
// the job scheduler that started it.
// - Slurm array job (sbatch --array=A-B): index = SLURM_ARRAY_TASK_ID - SLURM_ARRAY_TASK_MIN,
//   count = SLURM_ARRAY_TASK_COUNT. The ids must be a contiguous range with step 1 (any start:
//   --array=0-3 and --array=1-4 both work; a %limit is fine); --array=0-6:2 or 0,3,5 are refused.
//   With auto/N, N must equal the array's task count.
// - Kubernetes Indexed Job: index = JOB_COMPLETION_INDEX; Kubernetes does not tell the pod the
//   job's completion count, so it is given as auto/N (N = spec.completions).
// Slurm's variables win when both are set. Neither set: a clear error.
#pragma once

#include <functional>
#include <string>

#include "shardify/input_files.h"

namespace shardkit::shardify {

// Reads a variable; returns nullptr when it is unset.
using EnvLookup = std::function<const char*(const char*)>;

// Whether `text` asks for the part from the environment ("auto" or "auto/N").
bool is_auto_part(const std::string& text);

// Resolves "auto" / "auto/N" from the environment, or parses "i/N". Throws
// Error(kInvalidArgument) naming the variables it looked for.
PartSpec resolve_part(const std::string& text, const EnvLookup& env);
PartSpec resolve_part(const std::string& text);  // from the process environment

}  // namespace shardkit::shardify
