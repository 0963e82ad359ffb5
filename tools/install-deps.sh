#!/usr/bin/env bash
# Installs the Debian packages kq builds with, when any is missing. As root it runs apt-get;
# otherwise it prints the command to run. The CUDA toolkit is not a Debian package here: kq
# finds nvcc on PATH or in /usr/local/cuda, and builds the CPU parts alone without it.
#   tools/install-deps.sh           what the build needs
#   tools/install-deps.sh --test    and what the tests need as well (`make test` passes it)
set -euo pipefail
# libjs-chart.js: Chart.js, compiled into kq so that report.html draws its plots offline.
# python3-dev, pybind11-dev, python3-numpy: plugins/python, arms written in Python (the shipped
# numpy arm); libdlpack-dev: the DLPack header kq's tensors are offered to Python through.
packages=(cmake ninja-build g++ make git pkg-config
          libboost-dev libboost-program-options-dev libyaml-cpp-dev libtbb-dev
          doctest-dev nlohmann-json3-dev libssl-dev libjs-chart.js
          python3-dev pybind11-dev python3-numpy libdlpack-dev)
# chromium: the report test renders report.html in headless Chromium and checks the plots.
# clang, libclang-rt-dev (libFuzzer and the sanitizer runtimes; clang alone does not bring
# them): the fuzz test builds tests/fuzz with -fsanitize=fuzzer,address,undefined.
# python3-torch (1.13, CPU only): the generated torch_eager_cpu arm and the broken torch
# candidates run in the tests; torch_compile declines on it (no torch.compile before 2.0).
# slurmctld, slurmd, slurm-client, munge: the campaign test starts a one-node Slurm cluster of
# its own (its own munged, ports and state folder) and runs kq sweep --slurm on it.
# clang-format, pyflakes3: the style test (tools/check_style.sh).
test_packages=(chromium clang libclang-rt-dev python3-torch slurmctld slurmd slurm-client munge
               clang-format pyflakes3)
for arg in "$@"; do
  case "$arg" in
    --test) packages+=("${test_packages[@]}") ;;
    *) echo "usage: $0 [--test]" >&2; exit 2 ;;
  esac
done
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
echo "kq: missing Debian packages: ${missing[*]}"
if [ "$(id -u)" -ne 0 ]; then
  echo "kq: run as root, or: sudo apt-get install -y ${missing[*]}" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}"
