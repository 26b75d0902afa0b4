# Every dependency is a Debian package (see scripts/install-deps.sh).
find_package(PkgConfig REQUIRED)
pkg_check_modules(ZSTD REQUIRED IMPORTED_TARGET libzstd)
# .gz inputs are inflated by ISA-L's igzip (lib/shardify/byte_source.cc): Debian's libisal-dev.
pkg_check_modules(ISAL REQUIRED IMPORTED_TARGET libisal)
pkg_check_modules(XXHASH REQUIRED IMPORTED_TARGET libxxhash)
pkg_check_modules(UTF8PROC REQUIRED IMPORTED_TARGET libutf8proc)
pkg_check_modules(ONIG REQUIRED IMPORTED_TARGET oniguruma)
# SentencePiece .model files are read with libprotobuf; the benchmark compares with libsentencepiece.
pkg_check_modules(PROTOBUF REQUIRED IMPORTED_TARGET protobuf)
pkg_check_modules(SENTENCEPIECE IMPORTED_TARGET sentencepiece)
find_package(simdjson REQUIRED)
# The UnicodeScripts pre-tokenizer's script table is generated at build time from the Unicode
# Character Database of Debian's unicode-data (lib/tokenizer/CMakeLists.txt).
set(SHARDKIT_UNICODE_DATA_DIR /usr/share/unicode CACHE PATH
    "Unicode Character Database with Scripts.txt and DerivedAge.txt (Debian's unicode-data)")
foreach(f Scripts.txt DerivedAge.txt)
  if(NOT EXISTS "${SHARDKIT_UNICODE_DATA_DIR}/${f}")
    message(FATAL_ERROR "${SHARDKIT_UNICODE_DATA_DIR}/${f} not found: apt-get install unicode-data "
                        "(scripts/install-deps.sh), or set SHARDKIT_UNICODE_DATA_DIR")
  endif()
endforeach()
# Every JSON file and --json report is written through nlohmann::json (BENCHMARKS.md, "JSON").
find_package(nlohmann_json 3 REQUIRED)
# Debian's libsimdjson is built with threads enabled, which changes dom::parser's layout. Every
# translation unit that includes simdjson.h must agree, linked to simdjson::simdjson or not, or
# the One Definition Rule breaks (a crash in ~parser). So define it everywhere.
add_compile_definitions(SIMDJSON_THREADS_ENABLED=1)
find_package(CLI11 CONFIG QUIET)
if(NOT CLI11_FOUND AND NOT EXISTS /usr/include/CLI/CLI.hpp)
  message(FATAL_ERROR "CLI11 not found: apt-get install libcli11-dev")
endif()
find_package(Threads REQUIRED)
# shardkit's ordered pipeline (lib/core/ordered_pipeline.h) is oneTBB's parallel_pipeline:
# Debian's libtbb-dev.
find_package(TBB CONFIG REQUIRED)
find_package(ZLIB REQUIRED)
# Remote datasets (http://, https://, s3://): Debian's libcurl4-openssl-dev.
find_package(CURL REQUIRED)
include(ShardkitDuckDB)  # SHARDKIT_WITH_PARQUET
if(SHARDKIT_WITH_TORCH)
  find_package(Torch QUIET)
  if(NOT Torch_FOUND)
    message(WARNING "libtorch not found: the torch adapter, examples and Python module are skipped")
    set(SHARDKIT_WITH_TORCH OFF)
  endif()
endif()
