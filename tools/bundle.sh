#!/usr/bin/env bash
# Makes a relocatable kq install for a GPU host that lacks the development packages:
#   DEST/bin/kq, DEST/bin/plugins/*.so, DEST/lib/<the non-system runtime libraries>
# with $ORIGIN rpaths, so `DEST/bin/kq run SPEC` works wherever DEST is copied. The CUDA
# libraries (runtime, driver, cuDNN, NVRTC, CUPTI) are not copied: the host's own are used.
# The install carries the SDK too (DEST/include/kq, DEST/lib/cmake/kq: find_package(kq)) and the
# python plugin's sources, which the host builds against its own Python:
#   DEST/bin/build-python-plugin.sh DEST [PYTHON]
# When the build has the GPU tests, they come too, as DEST/tests/ with a CTestTestfile.cmake:
#   ctest --test-dir DEST/tests -L gpu --output-on-failure
# usage: tools/bundle.sh BUILD_DIR DEST
set -euo pipefail
build=${1:?usage: tools/bundle.sh BUILD_DIR DEST}
dest=${2:?usage: tools/bundle.sh BUILD_DIR DEST}
# Runs record the commit kq was built from; a build of uncommitted changes says "dirty" and
# kq merge flags its tasks. Said here, while a rebuild can still fix it.
version=$("$build/bin/kq" --version 2>/dev/null || true)
if [[ $version == *", dirty;"* ]]; then
  echo "bundle: $version: built from uncommitted changes; commit and rebuild" >&2
  git status --short --untracked-files=no 2>/dev/null | sed 's/^/  /' >&2 || true
fi
rm -rf "$dest"
cmake --install "$build" --prefix "$dest" --strip >/dev/null
mkdir -p "$dest/lib"
# The python plugin embeds the Python it was built against (3.11 here); the GPU host's is
# another (3.12): the plugin must be built there, against the host's Python (issue 12), so the
# one built here stays out of the bundle. Its sources and shipped arms travel, for the plugin
# built there (bin/build-python-plugin.sh).
rm -f "$dest/bin/plugins/libkq_python.so"
# Libraries a GPU host may lack; everything else (glibc, libstdc++, CUDA) is the host's.
keep='libboost_|libyaml-cpp|libtbb|libtbbmalloc|libcrypto|libssl'
for f in "$dest/bin/kq" "$dest"/bin/plugins/*.so; do
  ldd "$f" | awk '/=> \//{print $3}' | grep -E "/($keep)" || true
done | sort -u | while read -r lib; do
  cp -L "$lib" "$dest/lib/"
done
cp -r specs "$dest/specs"
# The candidates written for test specs (never loaded by default, not installed) travel too, for
# the GPU host's check of the broken shaped candidates (tools/gpu_check.sh part broken_shaped).
if compgen -G "$build/bin/plugins/test_specs/*.so" >/dev/null; then
  mkdir -p "$dest/bin/plugins/test_specs"
  cp "$build"/bin/plugins/test_specs/*.so "$dest/bin/plugins/test_specs/"
  strip "$dest"/bin/plugins/test_specs/*.so
fi

# The GPU tests, run by ctest from wherever DEST lands: ctest runs each test in the folder of
# its CTestTestfile.cmake, so every path here is relative to DEST/tests.
shopt -s nullglob
gpu_tests=("$build"/tests/gpu_test_*)
if ((${#gpu_tests[@]})); then
  mkdir -p "$dest/tests"
  {
    echo "# Made by tools/bundle.sh: kq's GPU tests in this relocatable install."
    for t in "${gpu_tests[@]}"; do
      [[ -x $t && -f $t ]] || continue
      name=$(basename "$t")
      cp "$t" "$dest/tests/$name"
      strip "$dest/tests/$name"
      echo "add_test(gpu/${name#gpu_} \"$name\")"
      echo "set_tests_properties(gpu/${name#gpu_} PROPERTIES LABELS gpu SKIP_RETURN_CODE 77" \
        "TIMEOUT 900 ENVIRONMENT \"KQ_TEST_BIN_DIR=../bin;KQ_TEST_SOURCE_DIR=..\")"
    done
  } >"$dest/tests/CTestTestfile.cmake"
  # Specs some GPU tests read beside the shipped ones (KQ_TEST_SOURCE_DIR is DEST).
  mkdir -p "$dest/tests/data"
  cp -r tests/data/specs_v2 tests/data/gpu_python_arms "$dest/tests/data/"
fi
echo "bundle: $dest ($(du -sh "$dest" | cut -f1)); run $dest/bin/kq run $dest/specs/residual_relu.yaml"
echo "bundle: the python plugin, built where it runs: $dest/bin/build-python-plugin.sh $dest [PYTHON]"
