#include "shardify/duckdb_library.h"

#include <unistd.h>

#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "core/library_on_demand.h"

namespace shardkit::shardify {
namespace {

// The places to try, in order (duckdb_library.h).
std::vector<std::string> candidates() {
  if (const char* chosen = std::getenv("SHARDKIT_DUCKDB_LIBRARY"); chosen && *chosen)
    return {chosen};
  // As the dynamic linker would find it for the program, by path (library_on_demand.h), then
  // by name for its cache of the system's libraries.
  std::vector<std::string> paths;
  for (const std::string& dir : library_search_dirs())
    if (const std::string path = dir + "/libduckdb.so"; ::access(path.c_str(), F_OK) == 0)
      paths.push_back(path);
  paths.push_back("libduckdb.so");
#ifdef SHARDKIT_DUCKDB_FALLBACK
  paths.push_back(SHARDKIT_DUCKDB_FALLBACK);
#endif
  return paths;
}

std::optional<DuckDbLibrary> open(std::string& failure) {
#define SHARDKIT_DUCKDB_NAME(name) "duckdb_" #name,
  static constexpr const char* kNames[] = {SHARDKIT_DUCKDB_FUNCTIONS(SHARDKIT_DUCKDB_NAME)};
#undef SHARDKIT_DUCKDB_NAME
  DuckDbLibrary lib;
  if (!open_functions(candidates(), kNames, lib, failure)) return std::nullopt;
  return lib;
}

constinit LibraryOnDemand<DuckDbLibrary> duckdb(open);

}  // namespace

const DuckDbLibrary& duckdb_library(std::string_view file) {
  return duckdb.get_or_throw(
      file,
      "Parquet input needs DuckDB's C library (1.1 or later), and none could be loaded "
      "(scripts/install-duckdb.sh pins one; $SHARDKIT_DUCKDB_LIBRARY names another):");
}

}  // namespace shardkit::shardify
