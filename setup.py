"""Builds shardkit's C++ parts for `pip install .` with CMake and puts them inside the package:

    shardkit/_shardkit*.so         the extension module
    shardkit/_native/bin/          shardify, shard-inspect (run by the console entry points)
    shardkit/_native/lib/          libduckdb.so when Parquet input is built in (.deps/duckdb)

Environment: SHARDKIT_CMAKE_ARGS (extra -D flags), SHARDKIT_BUILD_JOBS (default: all cores).
The CMake build directory is setuptools' build_temp (under build-pip/), so a second install
rebuilds incrementally; ccache is used when installed."""
import glob
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent


def require_wheel():
    """pip builds a wheel; with --no-build-isolation the wheel package must be in this interpreter.
    Without it setuptools only says "invalid command 'bdist_wheel'"."""
    try:
        import wheel  # noqa: F401
    except ImportError:
        sys.exit(
            f"shardkit: {sys.executable} has no 'wheel' package, which `pip install "
            "--no-build-isolation .` needs to build the wheel. Install with Debian's python3: "
            "`/usr/bin/python3 -m venv --system-site-packages venv && venv/bin/pip install "
            "--no-build-isolation .` (apt-get install python3-wheel python3-venv), or "
            f"`{sys.executable} -m pip install wheel` first for this interpreter.")


# pip asks for the wheel's metadata (dist_info) before it builds it (bdist_wheel).
if {"bdist_wheel", "dist_info"} & set(sys.argv[1:]):
    require_wheel()


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        build = Path(self.build_temp).resolve() / "cmake"
        stage = Path(self.build_temp).resolve() / "stage"
        shutil.rmtree(stage, ignore_errors=True)
        args = [
            "cmake", "-S", str(ROOT), "-B", str(build),
            "-DCMAKE_BUILD_TYPE=Release",
            "-DSHARDKIT_BUILD_TESTS=OFF",
            "-DSHARDKIT_WITH_TORCH=OFF",  # the module uses torch from Python, not libtorch
            "-DSHARDKIT_WITH_PYTHON=ON",
            f"-DPython3_EXECUTABLE={sys.executable}",
            f"-DCMAKE_INSTALL_PREFIX={stage}",
            "-DCMAKE_INSTALL_LIBDIR=lib",
            "-DSHARDKIT_PYTHON_INSTALL_DIR=python",
            # The module finds libduckdb.so in _native/lib, the tools in ../lib.
            "-DCMAKE_INSTALL_RPATH=$ORIGIN/_native/lib",
        ]
        if shutil.which("ninja"):
            args += ["-G", "Ninja"]
        if shutil.which("ccache"):
            args += ["-DCMAKE_CXX_COMPILER_LAUNCHER=ccache", "-DCMAKE_C_COMPILER_LAUNCHER=ccache"]
        args += shlex.split(os.environ.get("SHARDKIT_CMAKE_ARGS", ""))
        jobs = os.environ.get("SHARDKIT_BUILD_JOBS", str(os.cpu_count() or 1))
        subprocess.run(args, check=True)
        subprocess.run(["cmake", "--build", str(build), "-j", jobs], check=True)
        subprocess.run(["cmake", "--install", str(build)], check=True, stdout=subprocess.DEVNULL)

        module = glob.glob(str(stage / "python" / "shardkit" / "_shardkit*.so"))
        if len(module) != 1:
            raise RuntimeError(f"expected one built _shardkit module in {stage}, found {module}")
        target = Path(self.get_ext_fullpath(ext.name))
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(module[0], target)
        # The type stub the build generates from the option tables, and the typed-package marker.
        for typing_file in ("__init__.pyi", "py.typed"):
            shutil.copy2(stage / "python" / "shardkit" / typing_file, target.parent / typing_file)
        native = target.parent / "_native"
        shutil.rmtree(native, ignore_errors=True)
        (native / "bin").mkdir(parents=True)
        for tool in ("shardify", "shard-inspect"):
            shutil.copy2(stage / "bin" / tool, native / "bin" / tool)
        for lib in glob.glob(str(stage / "lib" / "libduckdb.so")):
            (native / "lib").mkdir(exist_ok=True)
            shutil.copy2(lib, native / "lib")


setup(
    version=(ROOT / "VERSION").read_text().strip(),
    ext_modules=[Extension("shardkit._shardkit", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
    # Not build/: that is where scripts/test.sh and the README put the CMake build tree.
    options={"build": {"build_base": "build-pip"}},
)
