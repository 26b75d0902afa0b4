// Built when DuckDB was not found (cmake/ShardkitDuckDB.cmake): Parquet input is refused clearly.
#include "core/error.h"
#include "shardify/readers_internal.h"

namespace shardkit::shardify {

std::unique_ptr<ExampleReader> make_parquet_reader(const std::filesystem::path& path, uint32_t,
                                                   const ReaderOptions&) {
  throw Error(ErrorCode::kUnsupported, path.string(),
              "this shardify was built without Parquet input: run scripts/install-duckdb.sh (or "
              "point CMAKE_PREFIX_PATH at a DuckDB install) and rebuild with "
              "-DSHARDKIT_WITH_PARQUET=ON");
}

bool parquet_input_available() { return false; }

}  // namespace shardkit::shardify
