#!/usr/bin/env bash
# The house style, checked: every tracked C++ and CUDA file as clang-format (.clang-format) would
# write it, and every tracked Python file of the project free of pyflakes' findings (unused or
# undefined names). The runs/ folder (saved artifacts, generated code) is left out. Exits 77, a
# skip, where a checker is missing; 1 with the findings where any file falls short. Formatters of
# other major versions break lines differently: the C++ check needs Debian 12's clang-format 14.
set -uo pipefail
cd "$(dirname "$0")/.."
format=$(command -v clang-format || true)
flakes=$(command -v pyflakes3 || command -v pyflakes || true)
if [ -z "$format" ] || [ -z "$flakes" ]; then
  echo "skipped: needs clang-format and pyflakes (tools/install-deps.sh --test installs them)"
  exit 77
fi
if ! git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  echo "skipped: not a git checkout (the tracked files are what is checked)"
  exit 77
fi
status=0
log=$(mktemp)
mapfile -t cxx < <(git ls-files '*.cpp' '*.hpp' '*.cu' '*.cuh' '*.h' | grep -v '^runs/')
version=$("$format" --version | sed -nE 's/.*version ([0-9]+).*/\1/p')
if [ "$version" != 14 ]; then
  echo "kq style: C++ not checked: clang-format ${version:-?} here, the house style is version 14's"
  cxx=()
elif ! "$format" --dry-run --Werror "${cxx[@]}" 2>"$log"; then
  grep -E 'warning|error' "$log" | head -40
  echo "kq style: C++ not clang-formatted; fix with: clang-format -i <file>"
  status=1
fi
rm -f "$log"
mapfile -t py < <(git ls-files '*.py' | grep -v '^runs/')
if ! "$flakes" "${py[@]}"; then
  echo "kq style: pyflakes findings above"
  status=1
fi
[ $status -eq 0 ] && echo "kq style: ${#cxx[@]} C++ files formatted, ${#py[@]} Python files clean"
exit $status
