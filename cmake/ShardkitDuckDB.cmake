# Parquet input (shardify --format parquet) reads through DuckDB's C API. DuckDB is found as
#   - a user's own install, through CMAKE_PREFIX_PATH or DuckDB_ROOT (include/duckdb.h, lib/libduckdb.so),
#   - or the pinned copy that scripts/install-duckdb.sh puts in .deps/duckdb.
# Without it everything else builds and .parquet input stops with a clear error.
option(SHARDKIT_WITH_PARQUET "Parquet input through DuckDB's C API (on when DuckDB is found)" ON)
set(SHARDKIT_HAVE_PARQUET OFF)
set(SHARDKIT_DUCKDB_BUNDLED OFF)
if(SHARDKIT_WITH_PARQUET)
  # HINTS come after CMAKE_PREFIX_PATH in CMake's search order, so a user's DuckDB wins.
  find_path(DuckDB_INCLUDE_DIR duckdb.h HINTS ${PROJECT_SOURCE_DIR}/.deps/duckdb/include)
  find_library(DuckDB_LIBRARY duckdb HINTS ${PROJECT_SOURCE_DIR}/.deps/duckdb/lib)
  if(DuckDB_INCLUDE_DIR AND DuckDB_LIBRARY)
    if(NOT TARGET DuckDB::duckdb)
      add_library(DuckDB::duckdb SHARED IMPORTED GLOBAL)
      set_target_properties(DuckDB::duckdb PROPERTIES
        IMPORTED_LOCATION ${DuckDB_LIBRARY}
        INTERFACE_INCLUDE_DIRECTORIES ${DuckDB_INCLUDE_DIR})
    endif()
    set(SHARDKIT_HAVE_PARQUET ON)
    # shardify loads libduckdb.so by name when it first reads Parquet (lib/shardify/
    # duckdb_library.h), which searches the RUNPATH of the program or module holding the
    # converter: the build tree's programs get the library's directory in theirs, and installed
    # ones $ORIGIN/../lib, where the pinned copy is installed beside shardkit's libraries.
    get_filename_component(_duckdb_dir ${DuckDB_LIBRARY} DIRECTORY)
    list(APPEND CMAKE_BUILD_RPATH ${_duckdb_dir})
    if(_duckdb_dir STREQUAL "${PROJECT_SOURCE_DIR}/.deps/duckdb/lib")
      set(SHARDKIT_DUCKDB_BUNDLED ON)
      list(APPEND CMAKE_INSTALL_RPATH "$ORIGIN/../${CMAKE_INSTALL_LIBDIR}")
    endif()
    message(STATUS "Parquet input: DuckDB ${DuckDB_LIBRARY}")
  else()
    message(WARNING "DuckDB not found (run scripts/install-duckdb.sh or set CMAKE_PREFIX_PATH): "
                    "shardify builds without Parquet input")
  endif()
endif()
