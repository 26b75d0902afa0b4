#include "loader/distributed_env.h"

#include <cerrno>
#include <cstdlib>
#include <string>

#include "core/error.h"

namespace shardkit::loader {
namespace {

uint32_t from_environment(const char* name, uint32_t fallback) {
  const char* text = std::getenv(name);
  if (!text || !*text) return fallback;
  char* end = nullptr;
  errno = 0;
  const unsigned long long v = std::strtoull(text, &end, 10);
  if (errno || *end || v >= LoaderOptions::kFromEnvironment || text[0] == '-')
    throw Error(ErrorCode::kInvalidArgument, "",
                std::string(name) + "='" + text + "' is not a rank or world size");
  return static_cast<uint32_t>(v);
}

}  // namespace

uint32_t effective_rank(const LoaderOptions& options) {
  return options.rank != LoaderOptions::kFromEnvironment ? options.rank
                                                         : from_environment("RANK", 0);
}

uint32_t effective_world_size(const LoaderOptions& options) {
  return options.world_size != LoaderOptions::kFromEnvironment ? options.world_size
                                                               : from_environment("WORLD_SIZE", 1);
}

}  // namespace shardkit::loader
