#!/usr/bin/env bash
# Builds the python plugin (plugins/python) where it is to run, against that machine's Python,
# from a kq install alone (a bundle from tools/bundle.sh, or any `cmake --install`): its SDK
# (lib/cmake/kq, include/kq) and the plugin's sources (share/kq/plugins/python). Needs a C++
# compiler of kq's family, cmake, Python's development files (headers and libpython) and
# pybind11: the module of PYTHON when it has one (pip install pybind11), else one CMake finds
# (Debian: pybind11-dev). Installs DEST/bin/plugins/libkq_python.so, beside python-arms/.
# usage: build-python-plugin.sh DEST [PYTHON]      (PYTHON: default python3 on PATH)
# e.g. on the GPU host: kq/bin/build-python-plugin.sh kq /opt/torch/.venv/bin/python3
# Environment: CXX (the compiler), KQ_PYTHON_BUILD_DIR (keep the build there; default: a
# temporary folder, removed when the build succeeds), JOBS (default: nproc).
set -euo pipefail
usage="usage: build-python-plugin.sh DEST [PYTHON]"
dest=${1:?$usage}
python=${2:-$(command -v python3 || true)}
if [[ -z $python ]]; then
  echo "build-python-plugin: no python3 on PATH; name one: $usage" >&2
  exit 2
fi
dest=$(cd "$dest" && pwd)
src="$dest/share/kq/plugins/python"
for f in "$dest/lib/cmake/kq/kqConfig.cmake" "$src/CMakeLists.txt"; do
  [[ -f $f ]] || { echo "build-python-plugin: $f missing: is $dest a kq install?" >&2; exit 2; }
done
# The interpreter's own path, not resolved through links: a venv's python3 links to /usr/bin's,
# and FindPython must see the venv.
command -v "$python" >/dev/null || { echo "build-python-plugin: $python: not found" >&2; exit 2; }
python=$(command -v "$python")
[[ $python == /* ]] || python="$PWD/$python"
version=$("$python" -c 'import sys; print(sys.version.split()[0])')

cmake_args=(-DCMAKE_PREFIX_PATH="$dest" -DCMAKE_INSTALL_PREFIX="$dest"
            -DPython3_EXECUTABLE="$python" -DCMAKE_BUILD_TYPE=RelWithDebInfo)
if pybind11_dir=$("$python" -c 'import pybind11; print(pybind11.get_cmake_dir())' 2>/dev/null); then
  cmake_args+=(-Dpybind11_DIR="$pybind11_dir")
  pybind11_from="$pybind11_dir (the module of $python)"
else
  pybind11_from="CMake's search (no pybind11 module in $python)"
fi
command -v ninja >/dev/null && cmake_args+=(-G Ninja)

build=${KQ_PYTHON_BUILD_DIR:-}
keep=1
if [[ -z $build ]]; then
  build=$(mktemp -d "${TMPDIR:-/tmp}/kq-python-plugin.XXXXXX")
  keep=0
fi
echo "build-python-plugin: Python $version ($python), pybind11 from $pybind11_from"
echo "build-python-plugin: sources $src, build folder $build"
log="$build/build.log"
mkdir -p "$build"
if ! { cmake -S "$src" -B "$build" "${cmake_args[@]}" &&
       cmake --build "$build" -j "${JOBS:-$(nproc)}" &&
       cmake --install "$build" --strip; } >"$log" 2>&1; then
  tail -n 40 "$log" >&2
  echo "build-python-plugin: failed; the whole log: $log" >&2
  exit 1
fi
grep -E '^-- (kq|Found Python3)' "$log" | sed 's/^-- /build-python-plugin: /' || true
cache() { sed -n "s/^$1:[A-Z]*=//p" "$build/CMakeCache.txt"; }
echo "build-python-plugin: pybind11 $(cache pybind11_DIR), compiler $(cache CMAKE_CXX_COMPILER)"
((keep)) || rm -rf "$build"
plugin="$dest/bin/plugins/libkq_python.so"
[[ -f $plugin ]] || { echo "build-python-plugin: $plugin was not installed" >&2; exit 1; }
echo "build-python-plugin: installed $plugin (Python $version)," \
  "its arms in $dest/bin/plugins/python-arms"
echo "build-python-plugin: check with: $dest/bin/kq list"
