#!/usr/bin/env bash
# Builds the libFuzzer target over the spec loader and the expression parser (tests/fuzz, with
# clang and -fsanitize=fuzzer,address,undefined) and runs it, seeded from specs/,
# tests/data/specs_v2, tests/data/bad_specs, tests/data/fuzz_regressions and tests/fuzz/seeds. Exits non-zero on any
# finding (crash, sanitizer report, hang over 10 s, memory over 2 GiB); the input that caused it
# is left in BUILD/findings/. The ctest test fuzz/spec (label fuzz) runs it for 60 s.
#   tools/fuzz.sh [--time SECONDS] [--runs N] [--build DIR] [--jobs N] [-- LIBFUZZER-ARGS...]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="$root/build/fuzz"
time_s=60
runs=""
jobs=1
while [ $# -gt 0 ]; do
  case "$1" in
    --time) time_s="$2"; shift 2 ;;
    --runs) runs="$2"; shift 2 ;;
    --build) build="$2"; shift 2 ;;
    --jobs) jobs="$2"; shift 2 ;;
    --) shift; break ;;
    *) echo "usage: $0 [--time SECONDS] [--runs N] [--build DIR] [--jobs N] [-- LIBFUZZER-ARGS...]" >&2
       exit 2 ;;
  esac
done
mkdir -p "$build"
build="$(cd "$build" && pwd)"
cxx="${KQ_FUZZ_CXX:-clang++}"
if ! command -v "$cxx" >/dev/null; then
  echo "kq fuzz: $cxx not found (tools/install-deps.sh --test installs clang)" >&2
  exit 77
fi
if [ ! -f "$("$cxx" -print-file-name=libclang_rt.fuzzer-x86_64.a)" ] &&
   [ ! -f "$("$cxx" -print-runtime-dir 2>/dev/null)/libclang_rt.fuzzer.a" ]; then
  echo "kq fuzz: $cxx has no libFuzzer runtime (Debian: libclang-rt-14-dev)" >&2
  exit 77
fi

cmake -S "$root/tests/fuzz" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DCMAKE_CXX_COMPILER="$cxx" >/dev/null
cmake --build "$build"

# New inputs go to a working corpus of this build; the seed folders are only read.
mkdir -p "$build/corpus" "$build/findings"
seeds=("$root/specs" "$root/tests/data/specs_v2" "$root/tests/data/bad_specs"
       "$root/tests/fuzz/seeds")
[ -d "$root/tests/data/fuzz_regressions" ] && seeds+=("$root/tests/data/fuzz_regressions")
# libFuzzer's own failure codes (77 for a crash) would read as "skipped" to ctest: 1 instead.
limits=(-max_total_time="$time_s" -rss_limit_mb=2048 -timeout=10 -max_len=16384
        -error_exitcode=1 -timeout_exitcode=1)
[ -n "$runs" ] && limits+=(-runs="$runs")
if [ "$jobs" -gt 1 ]; then limits+=(-jobs="$jobs" -workers="$jobs"); fi
cd "$build"
exec "$build/fuzz_spec" "${limits[@]}" -dict="$root/tests/fuzz/spec.dict" \
     -artifact_prefix="$build/findings/" -print_final_stats=1 "$@" "$build/corpus" "${seeds[@]}"
