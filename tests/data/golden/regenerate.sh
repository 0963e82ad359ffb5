#!/usr/bin/env bash
# Rewrites the golden reports of the committed runs: `kq report` of each run directory, copied
# to a path that is the same on every machine (the summary names its run directory). Run it only
# when a report is meant to change, and say why in the commit.
#   tests/data/golden/regenerate.sh BUILD_DIR
set -euo pipefail
root="$(cd "$(dirname "$0")/../../.." && pwd)"
kq="${1:-$root/build}/bin/kq"
work=/tmp/kq-golden
declare -A runs=(
  [h200-residual_relu]=runs/reference/h200-residual_relu
  [h200-residual_relu-frameworks]=runs/reference/h200-residual_relu-frameworks
  [h200-silu_mul-frameworks]=runs/reference/h200-silu_mul-frameworks
  [h200-run]=tests/data/h200-run
)
for name in "${!runs[@]}"; do
  rm -rf "${work:?}/$name"
  mkdir -p "$work"
  cp -r "$root/${runs[$name]}" "$work/$name"
  "$kq" report "$work/$name" > "$work/$name.console"
  out="$root/tests/data/golden/$name"
  mkdir -p "$out"
  for f in summary.json report.md junit.xml; do cp "$work/$name/$f" "$out/$f"; done
  # rounds.csv is every sample: one run's is enough.
  if [ "$name" = h200-run ]; then cp "$work/$name/rounds.csv" "$out/rounds.csv"; fi
  # report.html inlines Chart.js: only its decision, verdict table and timing tables are kept.
  python3 - "$work/$name/report.html" "$out/report-tables.html" <<'PY'
import sys
h = open(sys.argv[1], encoding="utf-8").read()
def between(a, b, start=0):
    i = h.index(a, start)
    return h[i:h.index(b, i) + len(b)]
parts = [between('<p class="decision">', "</p>"),
         between("<h2>Qualification</h2>", "</table>"),
         between("<h2>Timing per size</h2>", "<footer>")[:-len("<footer>")]]
open(sys.argv[2], "w", encoding="utf-8").write("\n".join(parts))
PY
  cp "$work/$name.console" "$out/console.txt"
done
