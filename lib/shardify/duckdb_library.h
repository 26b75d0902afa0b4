// DuckDB's C API, loaded when Parquet is first read rather than linked. Linked, libduckdb.so
// (a 60 MB C++ library) was mapped and relocated at the start of every process holding the
// converter, though few of them read Parquet: 8-10 ms of each `shardify` run and each
// `import shardkit`.
#pragma once

#include <duckdb.h>

#include <string_view>

namespace shardkit::shardify {

// The functions the Parquet reader calls: each member is the function duckdb.h declares as
// duckdb_<name>, resolved from the loaded library.
// clang-format off
#define SHARDKIT_DUCKDB_FUNCTIONS(X)                                                    \
  X(open_ext) X(create_config) X(set_config) X(destroy_config) X(close)                 \
  X(connect) X(disconnect) X(query) X(row_count) X(column_count) X(value_varchar)       \
  X(result_error) X(destroy_result) X(free) X(prepare) X(prepare_error)                 \
  X(prepared_statement_column_type) X(destroy_prepare) X(pending_prepared_streaming)    \
  X(pending_error) X(execute_pending) X(destroy_pending) X(fetch_chunk)                 \
  X(destroy_data_chunk) X(data_chunk_get_size) X(data_chunk_get_vector)                 \
  X(vector_get_data) X(vector_get_validity) X(validity_row_is_valid) X(string_t_data)   \
  X(string_t_length)
// clang-format on

struct DuckDbLibrary {
#define SHARDKIT_DUCKDB_MEMBER(name) decltype(&::duckdb_##name) name = nullptr;
  SHARDKIT_DUCKDB_FUNCTIONS(SHARDKIT_DUCKDB_MEMBER)
#undef SHARDKIT_DUCKDB_MEMBER
};

// The library, loaded by the first call that succeeds (thread-safe) and kept for the process.
// Looked for as $SHARDKIT_DUCKDB_LIBRARY when set (that file only); else by name, as the
// dynamic linker finds it (LD_LIBRARY_PATH, the RUNPATH of the program or module holding
// shardify, the system's directories); else where shardkit installs its bundled copy, or where
// the build found a DuckDB of the user's own. Throws Error (kUnsupported) naming each place tried
// when no library loads or one lacks a function; `file` is the input being read, for the message.
const DuckDbLibrary& duckdb_library(std::string_view file);

}  // namespace shardkit::shardify
