# Sourced by scripts/demo.sh and scripts/test.sh: the one configuration of the Release build in
# $BUILD (default build/), so that either command reuses what the other compiled. Defines
# shardkit_configure, which (re)configures $BUILD quietly.
BUILD=${BUILD_DIR:-build}
SHARDKIT_CONFIGURE_ARGS=(-G Ninja -DCMAKE_BUILD_TYPE=Release -DSHARDKIT_WITH_TORCH=ON
                         -DSHARDKIT_WITH_PYTHON=ON)
# ccache, when installed, lets `pip install .` (the packaging test) and other build directories
# reuse these compilations. The tests' precompiled header is cacheable with these sloppiness flags.
if command -v ccache >/dev/null; then
  SHARDKIT_CONFIGURE_ARGS+=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
  export CCACHE_SLOPPINESS=${CCACHE_SLOPPINESS:-pch_defines,time_macros,include_file_mtime,include_file_ctime}
fi

shardkit_configure() {
  cmake -S . -B "$BUILD" "${SHARDKIT_CONFIGURE_ARGS[@]}" >/dev/null
}
