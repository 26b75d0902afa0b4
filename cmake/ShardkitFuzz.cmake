# libFuzzer build (clang only), see RELIABILITY.md:
#   cmake -S . -B build-fuzz -G Ninja -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
#     -DSHARDKIT_FUZZ=ON -DSHARDKIT_WITH_TORCH=OFF -DSHARDKIT_WITH_PYTHON=OFF
#   ninja -C build-fuzz fuzzers && ctest --test-dir build-fuzz -L fuzz
# Every target gets coverage instrumentation plus ASan and UBSan; tests/fuzz links its targets
# with libFuzzer's main. Without this option the same targets are built as seed-corpus replayers.
option(SHARDKIT_FUZZ "Build libFuzzer targets (clang; ASan+UBSan)" OFF)
set(SHARDKIT_FUZZ_SECONDS 4 CACHE STRING "Seconds each fuzz target runs in the test suite")
if(SHARDKIT_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "SHARDKIT_FUZZ needs clang: -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++")
  endif()
  add_compile_options(-fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer
                      -fno-sanitize-recover=undefined -gline-tables-only)
  add_link_options(-fsanitize=address,undefined)
endif()
