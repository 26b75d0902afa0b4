#include "shardify/part_from_env.h"

#include <cstdlib>
#include <optional>

#include "core/error.h"

namespace shardkit::shardify {
namespace {

Error part_error(const std::string& why) {
  return Error(ErrorCode::kInvalidArgument, "", "--part auto: " + why);
}

// A non-negative decimal number in `name`, or nothing when it is unset.
std::optional<uint64_t> number(const EnvLookup& env, const char* name) {
  const char* v = env(name);
  if (!v || !*v) return std::nullopt;
  const std::string s(v);
  if (s.find_first_not_of("0123456789") != std::string::npos || s.size() > 9)
    throw part_error(std::string(name) + "='" + s + "' is not a task number");
  return std::stoull(s);
}

PartSpec checked(uint64_t index, uint64_t count, const std::string& from) {
  if (count == 0 || index >= count)
    throw part_error(from + " gives part " + std::to_string(index) + " of " +
                     std::to_string(count) + ", outside 0 <= i < N");
  return {static_cast<uint32_t>(index), static_cast<uint32_t>(count)};
}

PartSpec from_slurm(const EnvLookup& env, std::optional<uint64_t> given_count) {
  const uint64_t id = *number(env, "SLURM_ARRAY_TASK_ID");
  const auto count = number(env, "SLURM_ARRAY_TASK_COUNT");
  const auto min = number(env, "SLURM_ARRAY_TASK_MIN");
  const auto max = number(env, "SLURM_ARRAY_TASK_MAX");
  const auto step = number(env, "SLURM_ARRAY_TASK_STEP");
  if (!count || !min)
    throw part_error(
        "SLURM_ARRAY_TASK_ID is set but SLURM_ARRAY_TASK_COUNT or SLURM_ARRAY_TASK_MIN is not");
  // Parts are numbered 0..N-1 from the array's ids, so these must be one contiguous range.
  if ((step && *step != 1) || (max && *max - *min + 1 != *count))
    throw part_error(
        "the Slurm array's task ids must be a contiguous range with step 1 (e.g. "
        "--array=0-" +
        std::to_string(*count - 1) + "), got ids " + std::to_string(*min) + ".." +
        (max ? std::to_string(*max) : "?") + " for " + std::to_string(*count) + " tasks");
  if (id < *min) throw part_error("SLURM_ARRAY_TASK_ID is below SLURM_ARRAY_TASK_MIN");
  if (given_count && *given_count != *count)
    throw part_error("--part auto/" + std::to_string(*given_count) + " but the Slurm array has " +
                     std::to_string(*count) + " tasks");
  return checked(id - *min, *count,
                 "the Slurm array (SLURM_ARRAY_TASK_ID=" + std::to_string(id) +
                     ", SLURM_ARRAY_TASK_MIN=" + std::to_string(*min) + ")");
}

}  // namespace

bool is_auto_part(const std::string& text) { return text.rfind("auto", 0) == 0; }

PartSpec resolve_part(const std::string& text, const EnvLookup& env) {
  if (!is_auto_part(text)) return parse_part(text);
  std::optional<uint64_t> given_count;
  if (text != "auto") {
    const std::string n = text.substr(4);
    if (n.size() < 2 || n[0] != '/' || n.find_first_not_of("0123456789", 1) != std::string::npos ||
        n.size() > 10)
      throw Error(ErrorCode::kInvalidArgument, "",
                  "--part must be i/N, auto or auto/N (got " + text + ")");
    given_count = std::stoull(n.substr(1));
    if (*given_count == 0) throw part_error("auto/N needs N >= 1");
  }
  if (number(env, "SLURM_ARRAY_TASK_ID")) return from_slurm(env, given_count);
  if (const auto index = number(env, "JOB_COMPLETION_INDEX")) {
    if (!given_count)
      throw part_error(
          "JOB_COMPLETION_INDEX is set (a Kubernetes Indexed Job) but the number of parts is "
          "not: use --part auto/N with N = the job's completions");
    return checked(*index, *given_count,
                   "JOB_COMPLETION_INDEX=" + std::to_string(*index) + " with auto/" +
                       std::to_string(*given_count));
  }
  std::string why =
      "neither SLURM_ARRAY_TASK_ID (a Slurm array job, sbatch --array) nor "
      "JOB_COMPLETION_INDEX (a Kubernetes Indexed Job) is set";
  if (env("SLURM_JOB_ID")) why += "; this Slurm job is not an array job";
  throw part_error(why + ". Use --part i/N to give the part by hand");
}

PartSpec resolve_part(const std::string& text) {
  return resolve_part(text, [](const char* name) -> const char* { return std::getenv(name); });
}

}  // namespace shardkit::shardify
