#!/usr/bin/env bash
# The GPU-host check of a relocatable kq install (tools/bundle.sh), in parts that each fit in a
# few minutes. Every part writes under OUT and prunes the bulky artifacts (cubin, SASS, PTX) so
# that what is left is JSON, markdown and logs.
#
#   tools/gpu_check.sh KQ_DIR OUT tests     ctest's gpu suite (the selftest over every spec
#                                           included; kept in OUT/tests/selftest); KQ_GPU_TESTS
#                                           and KQ_GPU_TESTS_EXCLUDE (ctest -R / -E regexes) split
#                                           it: the whole suite no longer fits in 10 minutes
#   tools/gpu_check.sh KQ_DIR OUT residual  kq run residual_relu with the same arm timed twice,
#                                           then tools/crosscheck.py against do_bench and ncu
#   tools/gpu_check.sh KQ_DIR OUT specs     kq run on every other shipped spec (--quick)
#   tools/gpu_check.sh KQ_DIR OUT deep      full qualification (2^31 + 5 elements) of two arms,
#                                           and compute-sanitizer passes over the CUDA arms
#   tools/gpu_check.sh KQ_DIR OUT guards    the broken candidates of the timing defences beside
#                                           two good arms: their verdicts and the decision
#   tools/gpu_check.sh KQ_DIR OUT python    builds plugins/python against the host's Python
#                                           (KQ_PYTHON_FOR_PLUGIN, default the torch venv's);
#                                           the other parts then run its arms too
#   tools/gpu_check.sh KQ_DIR OUT selftest  kq selftest on the specs named in KQ_SELFTEST_SPECS
#                                           (default: all), so that the selftest over every arm,
#                                           Python arms included, can be split across commands
#                                           of a few minutes each; KQ_SELFTEST_SIZES (e.g.
#                                           2^20,2^24,2^28) times every spec in full there
#   tools/gpu_check.sh KQ_DIR OUT reference residual_relu and silu_mul with every family's arm
#                                           (CUDA C++, cuDNN, Thrust, PTX, NVRTC, eager PyTorch,
#                                           torch.compile, Triton) at 2^20, 2^24 and 2^28
#   tools/gpu_check.sh KQ_DIR OUT full      what a new user runs first: the full qualification of
#                                           residual_relu (2^31 + 5 included) with every good
#                                           arm (or those of KQ_FULL_ARMS), its wall time, the
#                                           slowest cases' stages and each arm's span
#   tools/gpu_check.sh KQ_DIR OUT first     the README's first arms (examples/first_arm): the CUDA
#                                           plugin built against KQ_DIR's SDK, then kq run --quick
#                                           of residual_relu with it, the Triton arm (after part
#                                           python), nvrtc_jit and torch_compile
#   tools/gpu_check.sh KQ_DIR OUT half      kq run --quick on the half-precision specs named in
#                                           KQ_HALF_SPECS (default: all four) with every arm
#                                           (or those of KQ_HALF_ARMS that take the spec), at
#                                           2^20, 2^24 and 2^28
#   tools/gpu_check.sh KQ_DIR OUT shaped    kq run --quick on the format-2 specs named in
#                                           KQ_SHAPED_SPECS (default: softmax, layer and RMS norm in
#                                           bf16), timed at KQ_SHAPED_POINTS only (default
#                                           32768x4096), with the arms of KQ_SHAPED_ARMS (default:
#                                           the GPU arms that take them); then kq qualify --quick
#                                           of the KernelBench specs in KQ_SHAPED_KB (default none);
#                                           KQ_SHAPED_JOBS arms qualified at once (default 1)
#   tools/gpu_check.sh KQ_DIR OUT kb        kq qualify --quick of the KernelBench specs named in
#                                           KQ_KB_SPECS (default: all of specs/kernelbench), each
#                                           timed, so qualified, at its first point (the smaller
#                                           get_inputs shape) beside the planner's cases, with
#                                           KQ_KB_ARMS (default: every good arm but torch.compile's,
#                                           which recompiles per shape), KQ_KB_JOBS arms at once;
#                                           one line per spec: the arms that qualified, wall time
#   tools/gpu_check.sh KQ_DIR OUT broken_shaped  the known-broken candidates of format-2 specs,
#                                           each on the specs it takes, --quick, beside cpu_tbb
#                                           (KQ_BROKEN_SHAPED_EXTRA: one more "SPEC ARMS" line)
#   tools/gpu_check.sh KQ_DIR OUT isolation  kq run residual_relu --quick with every good arm, the
#                                           candidates of the timing defences and the outside
#                                           arm files of tests/data/outside_arms (a good one and
#                                           a delayed saboteur), at KQ_ISOLATION_SIZES (default
#                                           2^20,2^24): each outside file timed apart; wall time
#   tools/gpu_check.sh KQ_DIR OUT wall      what a new user runs, in order, on a fresh host: kq run
#                                           residual_relu with the runs of KQ_WALL_RUNS (default
#                                           "quick quick full": --quick twice, the second with
#                                           kq's caches warm, then the full run; "cold" empties
#                                           the caches), every good arm; each one's wall time and
#                                           where it went
#   tools/gpu_check.sh KQ_DIR OUT compile_profile  where torch.compile's first call goes (the
#                                           torch venv's python, tools/compile_profile.py): on
#                                           the CPU and on CUDA, each with a cold Inductor and
#                                           Triton cache and again warm; cProfile tables in OUT
#   tools/gpu_check.sh KQ_DIR OUT huge_shaped  full qualification of softmax_bf16 (huge points
#                                           included) with KQ_HUGE_ARMS and the candidate with
#                                           32-bit offsets (bin/plugins/full_only)
#   tools/gpu_check.sh KQ_DIR OUT gemm      kq run --quick of specs/gemm (KQ_GEMM_SPECS) with the
#                                           GEMM arms (KQ_GEMM_ARMS; cuda_mma_matmul among them)
#                                           at KQ_GEMM_POINTS: verdicts, decisions, TFLOP/s and %
#                                           of the compute light per point and arm
#   tools/gpu_check.sh KQ_DIR OUT huge_matmul  full qualification of KernelBench 8 (A past 2^31
#                                           elements) with KQ_HUGE_ARMS and the CUDA product
#                                           candidates (bin/plugins/test_specs)
#   tools/gpu_check.sh KQ_DIR OUT campaign  the KernelBench sweep (or the specs of KQ_CAMPAIGN_SPECS,
#                                           KQ_CAMPAIGN_ARMS) in OUT/campaign, a command at a time:
#                                           planned on the first (kq sweep --quick --plan-only),
#                                           then each task not yet completed run by kq sweep-task,
#                                           started only where its guess of seconds (KQ_CAMPAIGN_EST
#                                           "index:s ...", else KQ_CAMPAIGN_RESERVE, 420) fits what
#                                           is left of KQ_CAMPAIGN_SECONDS (default 540), so that
#                                           none is killed half done; then kq merge. KQ_DIR and OUT
#                                           must be the same paths each time (plan.json holds them)
#   tools/gpu_check.sh KQ_DIR OUT devices   kq qualify residual_relu (KQ_DEVICES_FULL=1: its
#                                           full plan) on --devices 0, then on all GPUs where
#                                           there are two or more: wall times, cases per GPU,
#                                           verdicts, the workers' CUDA_VISIBLE_DEVICES
#
# kq needs NVRTC and CUPTI from the CUDA toolkit: /usr/local/cuda/lib64 goes on its library path
# only (PyTorch, used by crosscheck.py, keeps its own).
set -uo pipefail
kq_dir=$(realpath "${1:?usage: tools/gpu_check.sh KQ_DIR OUT PART}")
out=$(realpath -m "${2:?usage: tools/gpu_check.sh KQ_DIR OUT PART}")
part=${3:?usage: tools/gpu_check.sh KQ_DIR OUT PART}
here=$(dirname "$(realpath "$0")")
mkdir -p "$out"
kq="$kq_dir/bin/kq"
specs="$kq_dir/specs"
kq_env=(env "LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}")
twice=cuda_fused_residual_relu_v4_b1024

# Qualification's timeline from a run's qualification.jsonl: when each arm's first case began and
# its verdict came, in seconds of the stage, by verdict.
arm_spans() {
  python3 - "$1" <<'PY'
import json, sys
span = {}
for r in (json.loads(l) for l in open(sys.argv[1])):
    if "at_s" not in r or r.get("pass"):
        continue
    if r.get("type") == "case_start":
        span.setdefault(r["arm"], [r["at_s"], None])
    if r.get("type") == "verdict" and r["arm"] in span:
        span[r["arm"]][1] = r["at_s"]
for arm, (a, b) in sorted(span.items(), key=lambda kv: kv[1][1] or 0):
    print("%-36s from %6.1f s to %6.1f s" % (arm, a, b or -1))
PY
}

prune() {
  find "$out" \( -name '*.cubin' -o -name '*.sass' -o -name '*.ptx' -o -name '*.lock' \) -delete
  # Logs beyond 256 KiB keep their head and tail.
  find "$out" -name '*.log' -size +256k | while read -r f; do
    { head -c 131072 "$f"; printf '\n[... cut by gpu_check.sh ...]\n'; tail -c 131072 "$f"; } >"$f.cut"
    mv "$f.cut" "$f"
  done
}
trap prune EXIT

step() { echo "== $(date +%T) $*"; }

case $part in
  python)
    step "build plugins/python against ${KQ_PYTHON_FOR_PLUGIN:=/opt/torch/.venv/bin/python3}"
    "$kq_dir/bin/build-python-plugin.sh" "$kq_dir" "$KQ_PYTHON_FOR_PLUGIN" 2>&1 | tail -n 5
    "${kq_env[@]}" "$kq" list 2>&1 | grep -E "libkq_python|load errors" | head -n 40
    ;;
  selftest)
    chosen=$(mktemp -d)
    for s in ${KQ_SELFTEST_SPECS:-$(cd "$specs" && ls *.yaml | sed 's/\.yaml$//')}; do
      cp "$specs/$s.yaml" "$chosen/"
    done
    step "kq selftest on: $(ls "$chosen" | tr '\n' ' ')"
    "${kq_env[@]}" "$kq" selftest --quick --hang-timeout 20 --specs "$chosen" \
      ${KQ_SELFTEST_SIZES:+--sizes "$KQ_SELFTEST_SIZES"} --out "$out/selftest" 2>&1 | tail -n 100
    ;;
  reference)
    sizes=1048576,16777216,268435456
    rr=cuda_fused_residual_relu_v4_b1024,nvrtc_jit,cudnn_pointwise,thrust_residual_relu
    rr+=,inline_ptx_residual_relu,torch_eager,torch_compile,torch_compile_autotune
    rr+=,triton_residual_relu_1024,triton_residual_relu_4096
    sm=cuda_fused_silu_mul_v4_b1024,nvrtc_jit,cudnn_pointwise,thrust_silu_mul,torch_eager
    sm+=,torch_compile,torch_compile_autotune,triton_silu_mul_1024,triton_silu_mul_4096
    step "kq run residual_relu"
    "${kq_env[@]}" timeout "${KQ_REFERENCE_TIMEOUT:-270}" "$kq" run "$specs/residual_relu.yaml" \
      --quick --arms "$rr" --sizes "$sizes" --out "$out/residual_relu" 2>&1 | tail -n 30
    step "kq run silu_mul"
    "${kq_env[@]}" timeout "${KQ_REFERENCE_TIMEOUT:-270}" "$kq" run "$specs/silu_mul.yaml" \
      --quick --arms "$sm" --sizes "$sizes" --out "$out/silu_mul" 2>&1 | tail -n 30
    ;;
  half)
    for s in ${KQ_HALF_SPECS:-residual_relu_bf16 residual_relu_f16 silu_mul_bf16 gelu_f16}; do
      step "kq run $s"
      "${kq_env[@]}" timeout "${KQ_REFERENCE_TIMEOUT:-270}" "$kq" run "$specs/$s.yaml" --quick \
        ${KQ_HALF_ARMS:+--arms "$KQ_HALF_ARMS"} --sizes 1048576,16777216,268435456 \
        --out "$out/$s" 2>&1 | tail -n 40
    done
    ;;
  shaped)
    arms=${KQ_SHAPED_ARMS:-torch_eager,torch_compile,nvrtc_jit,cudnn_norm,cuda_softmax,cuda_log_softmax,cuda_layer_norm,cuda_rms_norm,triton_softmax,triton_log_softmax,triton_layer_norm,triton_rms_norm}
    points=${KQ_SHAPED_POINTS:-}
    [ -n "$points" ] || points='[{M: 32768, N: 4096}]'  # (a default with braces breaks ${:-})
    chosen=$(mktemp -d)
    for s in ${KQ_SHAPED_SPECS:-softmax_bf16 layer_norm_bf16 rms_norm_bf16}; do
      # The spec as shipped, its timing grid replaced by the chosen points.
      python3 - "$specs/$s.yaml" "$chosen/$s.yaml" "$points" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
text = re.sub(r"(?m)^  (grid|points):.*(\n    .*)*", "  points: " + sys.argv[3], text, count=1)
open(sys.argv[2], "w").write(text)
PY
      step "kq run $s at $points"
      start=$(date +%s%N)
      "${kq_env[@]}" timeout "${KQ_REFERENCE_TIMEOUT:-300}" "$kq" run "$chosen/$s.yaml" --quick \
        --arms "$arms" -j "${KQ_SHAPED_JOBS:-1}" --out "$out/$s" 2>&1 | tail -n 40
      echo "wall: $(( ($(date +%s%N) - start) / 1000000 )) ms"
    done
    for s in ${KQ_SHAPED_KB:-}; do
      step "kq qualify kernelbench/$s"
      "${kq_env[@]}" timeout "${KQ_REFERENCE_TIMEOUT:-300}" "$kq" qualify "$specs/kernelbench/$s.yaml" \
        --quick --arms "$arms" --out "$out/kb_$s" 2>&1 | tail -n 12
    done
    ;;
  kb)
    arms=${KQ_KB_ARMS:-cpu_tbb,torch_eager,torch_eager_cpu,nvrtc_jit,cuda_fused,cudnn_graph,cudnn_norm,cuda_softmax,cuda_log_softmax,cuda_layer_norm,cuda_rms_norm,triton_softmax,triton_log_softmax,triton_layer_norm,triton_rms_norm}
    chosen=$(mktemp -d)
    mkdir -p "$out/kb"
    for f in "$specs"/kernelbench/*.yaml; do
      s=$(basename "$f" .yaml)
      [ -z "${KQ_KB_SPECS:-}" ] || [[ " $KQ_KB_SPECS " == *" $s "* ]] || continue
      # The spec as shipped, timed (and so qualified) at its first point only.
      python3 - "$f" "$chosen/$s.yaml" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
# The timing points' flow list (qualification points may be a block list above it).
first = re.search(r"(?m)^  points: \[(\{[^}]*\}).*$", text)
if first:
    text = text[:first.start()] + "  points: [" + first.group(1) + "]" + text[first.end():]
open(sys.argv[2], "w").write(text)
PY
      start=$(date +%s%N)
      "${kq_env[@]}" timeout "${KQ_REFERENCE_TIMEOUT:-300}" "$kq" qualify "$chosen/$s.yaml" --quick \
        --arms "$arms" -j "${KQ_KB_JOBS:-4}" --out "$out/kb/$s" >"$out/kb/$s.log" 2>&1
      wall=$(( ($(date +%s%N) - start) / 1000 ))
      python3 - "$out/kb/$s/summary.json" "$s" "$wall" <<'PY' | tee -a "$out/kb.txt"
import json, sys
try:
    arms = json.load(open(sys.argv[1]))["arms"]
except (OSError, ValueError, KeyError) as e:
    print("%-32s no summary (%s)" % (sys.argv[2], e))
    sys.exit(0)
ok = [a["name"] for a in arms if a["verdict"] == "qualified"]
bad = ["%s %s" % (a["name"], a["verdict"]) for a in arms if a["verdict"] != "qualified"]
n = max((a.get("counts", {}).get("total", 0) for a in arms), default=0)
print("%-32s %2d qualified (%d cases, %.0f s): %s%s" % (
    sys.argv[2], len(ok), n, int(sys.argv[3]) / 1e6, ", ".join(ok),
    ("; not: " + ", ".join(bad)) if bad else ""))
PY
    done
    ;;
  broken_shaped)
    # Each known-broken candidate of format-2 specs on the specs it takes (tests/data/specs_v2
    # from the working tree beside KQ_DIR's specs), quick, beside cpu_tbb: the check that
    # rejected it against the one it declares. KQ_BROKEN_SHAPED_FULL=1 adds the full plan
    # (the huge cases) for the candidates only caught there.
    v2="$here/../tests/data/specs_v2"
    plugins=()
    for p in "$kq_dir"/bin/plugins/test_specs/*.so; do
      [ -f "$p" ] && plugins+=(--plugin "$p")
    done
    [ ${#plugins[@]} -gt 0 ] && plugins=(--plugin-dir "$kq_dir/bin/plugins" "${plugins[@]}")
    chosen=$(mktemp -d)
    while read -r spec arms; do
      [ -n "$spec" ] || continue
      step "broken candidates on $spec"
      # Timed, so qualified, at one small point: the flaws show long before the spec's own.
      python3 - "$spec" "$chosen/$(basename "$spec")" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
product = re.search(r"(?m)^dims:.*\bK:", text)  # a matrix product's M, N and K
point = "{M: 64, N: 64, K: 64}" if product else "{M: 64, N: 4096}"
text = re.sub(r"(?m)^timing:.*(\n[ ]+.*)*", "timing: {points: [%s]}" % point, text, count=1)
open(sys.argv[2], "w").write(text)
PY
      spec="$chosen/$(basename "$spec")"
      "${kq_env[@]}" timeout "${KQ_REFERENCE_TIMEOUT:-300}" "$kq" qualify "$spec" --quick \
        --include-broken --arms "cpu_tbb,$arms" -j 3 "${plugins[@]}" \
        --out "$out/broken/$(basename "$spec" .yaml)" 2>&1 | grep -E "^  [a-z_0-9]+: " | tee -a "$out/broken.txt"
    done <<EOF
$specs/softmax_bf16.yaml broken_cpu_softmax_tail_skipped,broken_cpu_softmax_bf16_sum,broken_cpu_softmax_no_max
$v2/softmax.yaml broken_cpu_softmax_no_max,broken_cpu_softmax_tail_skipped,broken_cpu_softmax_bf16_sum
$specs/layer_norm_bf16.yaml broken_cpu_layer_norm_one_pass
$specs/rms_norm_bf16.yaml broken_cpu_rms_norm_eps_outside
$v2/argmax.yaml broken_cpu_argmax_last_tie
$v2/cumsum_exclusive.yaml broken_cpu_cumsum_inclusive
$v2/cross_entropy.yaml broken_cpu_cross_entropy_no_lse
$specs/kernelbench/08_matmul_irregular_shapes.yaml broken_cpu_matmul_k_tail_skipped,broken_cpu_matmul_bf16_accumulation,broken_cpu_matmul_tf32_inputs,broken_cpu_matmul_mn_tail_skipped,broken_cuda_matmul_splitk_race
$specs/kernelbench/17_matmul_transposed_b.yaml broken_cpu_matmul_transposed_stride
${KQ_BROKEN_SHAPED_EXTRA:-}
EOF
    ;;
  huge_shaped)
    # Full qualification (the huge points: a tensor above 2^31 elements whose last row starts
    # past 2^31, and a row of 2^24 + 1) of softmax_bf16, timed at one small point, with the
    # arms of KQ_HUGE_ARMS and the candidate with 32-bit offsets, caught only there.
    spec="$(mktemp -d)/softmax_bf16.yaml"
    sed -E 's/^  (grid|points):.*/  points: [{M: 64, N: 4096}]/' "$specs/softmax_bf16.yaml" >"$spec"
    step "full qualification of softmax_bf16"
    start=$(date +%s%N)
    "${kq_env[@]}" timeout "${KQ_FULL_TIMEOUT:-540}" "$kq" qualify "$spec" --include-broken \
      --plugin-dir "$kq_dir/bin/plugins" --plugin "$kq_dir/bin/plugins/full_only/libkq_broken_cuda_shaped.so" \
      --arms "${KQ_HUGE_ARMS:-cuda_softmax,triton_softmax},broken_cuda_softmax_offsets32" -j 3 \
      --out "$out/huge" 2>&1 | tail -n 12
    echo "wall: $(( ($(date +%s%N) - start) / 1000000 )) ms"
    ;;
  gemm)
    # kq run --quick of the bf16 GEMM specs (KQ_GEMM_SPECS, default all three of specs/gemm) at
    # KQ_GEMM_POINTS (timing-point numbers; default the spec's own), with KQ_GEMM_ARMS, 4 arms
    # qualified at once; each spec's verdicts and decision, and per point and arm the median,
    # TFLOP/s, % of the compute light and graph replay's median where timed.
    arms=${KQ_GEMM_ARMS:-cuda_mma_matmul,triton_matmul,cublaslt,torch_eager,torch_compile}
    mkdir -p "$out/gemm"
    for s in ${KQ_GEMM_SPECS:-matmul_bf16 linear_bias_bf16 linear_gelu_bf16}; do
      step "gemm $s"
      start=$(date +%s)
      "${kq_env[@]}" timeout "${KQ_GEMM_TIMEOUT:-300}" "$kq" run "$specs/gemm/$s.yaml" --quick \
        ${KQ_GEMM_POINTS:+--points "$KQ_GEMM_POINTS"} --arms "$arms" -j 4 --out "$out/gemm/$s" \
        >"$out/gemm/$s.log" 2>&1
      echo "== $s ($(( $(date +%s) - start )) s)" | tee -a "$out/gemm.txt"
      grep -E "^  [a-z_0-9]+: (qualified|rejected|crashed|hung)|^(Adopt|Keep|No decision)" \
        "$out/gemm/$s.log" | tee -a "$out/gemm.txt"
      python3 - "$out/gemm/$s/summary.json" <<'PY' | tee -a "$out/gemm.txt"
import json, sys
try:
    rows = json.load(open(sys.argv[1]))["timing"]
except (OSError, ValueError, KeyError) as e:
    print("no timing (%s)" % e)
    sys.exit(0)
for r in rows:
    print("%s: %.3g GFLOP, light %.0f TFLOP/s, %s-bound" % (
        r.get("point", r["size"]), r.get("flops", 0) / 1e9, r.get("compute_light_tflops", 0),
        r.get("bound", "?")))
    for c in sorted(r["arms"], key=lambda c: c["median_s"]):
        tflops = r.get("flops", 0) / c["median_s"] / 1e12
        graph = c.get("graph_median_s")
        print("  %-24s %10.1f us %7.1f TFLOP/s %6.1f%%%s" % (
            c["arm"], c["median_s"] * 1e6, tflops, c.get("pct_compute", 0),
            "  graph %.1f us" % (graph * 1e6) if graph else ""))
PY
    done
    ;;
  devices)
    # Qualification spread over the host's GPUs (kq qualify --devices): residual_relu's plan
    # (KQ_DEVICES_FULL=1: the full one) with every good arm, on GPU 0 alone and then on all of
    # them where there are two or more: the wall times, the cases each GPU ran, the verdicts
    # (which must agree), and the workers' GPUs from their logs.
    quick=--quick
    [ "${KQ_DEVICES_FULL:-0}" = 1 ] && quick=
    count=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
    lists="0"
    [ "$count" -ge 2 ] && lists="0 all"
    for d in $lists; do
      step "qualify residual_relu on --devices $d ($count GPU(s) here)"
      start=$(date +%s%N)
      "${kq_env[@]}" timeout "${KQ_FULL_TIMEOUT:-540}" "$kq" qualify "$specs/residual_relu.yaml" \
        $quick --devices "$d" -j "${KQ_DEVICES_JOBS:-8}" --out "$out/devices-$d" >"$out/devices-$d.log" 2>&1
      echo "== --devices $d: $(( ($(date +%s%N) - start) / 1000000 )) ms" | tee -a "$out/devices.txt"
      python3 - "$out/devices-$d" <<'PY' | tee -a "$out/devices.txt"
import collections, json, sys
d = sys.argv[1]
by_gpu = collections.Counter()
secs = collections.Counter()
for line in open(d + "/qualification.jsonl"):
    r = json.loads(line)
    if r.get("type") == "case":
        by_gpu[r.get("gpu", "none")] += 1
        secs[r.get("gpu", "none")] += r.get("seconds", 0)
for g in sorted(by_gpu, key=str):
    print("  GPU %s: %d cases, %.1f s" % (g, by_gpu[g], secs[g]))
for a in json.load(open(d + "/summary.json"))["arms"]:
    print("  %-40s %s" % (a["name"], a["verdict"]))
PY
      grep -ho "CUDA_VISIBLE_DEVICES=[^ ]*" "$out/devices-$d"/logs/qualify-*.log | sort | uniq -c
    done
    ;;
  huge_matmul)
    # Full qualification of KernelBench 8 (its huge point: A of 524161 x 4097, past 2^31
    # elements), timed at one small point, with KQ_HUGE_ARMS and the CUDA product candidates
    # (bin/plugins/test_specs): the one with 32-bit offsets is caught only there.
    spec="$(mktemp -d)/08_matmul_irregular_shapes.yaml"
    sed -E 's/^  points:.*/  points: [{M: 64, N: 64, K: 64}]/' \
      "$specs/kernelbench/08_matmul_irregular_shapes.yaml" >"$spec"
    step "full qualification of 08_matmul_irregular_shapes"
    start=$(date +%s%N)
    "${kq_env[@]}" timeout "${KQ_FULL_TIMEOUT:-540}" "$kq" qualify "$spec" --include-broken \
      --plugin-dir "$kq_dir/bin/plugins" --plugin "$kq_dir/bin/plugins/test_specs/libkq_broken_cuda_matmul.so" \
      --arms "${KQ_HUGE_ARMS:-cublaslt,triton_matmul},broken_cuda_matmul_offsets32,broken_cuda_matmul_splitk_race" \
      -j 4 --out "$out/huge_matmul" 2>&1 | tail -n 12
    echo "wall: $(( ($(date +%s%N) - start) / 1000000 )) ms"
    ;;
  compile_profile)
    py=${KQ_PYTHON_FOR_PLUGIN:-/opt/torch/.venv/bin/python3}
    for device in cpu cuda; do
      export TORCHINDUCTOR_CACHE_DIR="$out/profile-cache/inductor"
      export TRITON_CACHE_DIR="$out/profile-cache/triton"
      rm -rf "$out/profile-cache"
      for cache in cold warm; do
        step "torch.compile on $device, $cache cache"
        timeout 240 "$py" "$here/compile_profile.py" "$device" "$out/profile-$device-$cache.txt"
        head -n 30 "$out/profile-$device-$cache.txt" | tail -n 22 | cut -c1-160
      done
    done
    rm -rf "$out/profile-cache"
    ;;
  wall)
    # kq's cache folder (Inductor's, Triton's, NVRTC's and cuDNN's entries) starts empty here;
    # "cold" among the runs empties it again.
    export KQ_CACHE_DIR="${KQ_WALL_CACHE:-$out/cache}"
    rm -rf "$KQ_CACHE_DIR"
    i=0
    for r in ${KQ_WALL_RUNS:-quick quick full}; do
      if [ "$r" = cold ]; then
        rm -rf "$KQ_CACHE_DIR"
        continue
      fi
      i=$((i + 1))
      flags=()
      [ "$r" = quick ] && flags=(--quick)
      step "kq run residual_relu ${flags[*]} (run $i)"
      start=$(date +%s%N)
      "${kq_env[@]}" timeout "${KQ_WALL_TIMEOUT:-400}" "$kq" run "$specs/residual_relu.yaml" \
        "${flags[@]}" --out "$out/wall/$i-$r" >"$out/wall-$i-$r.log" 2>&1
      echo "run $i ($r): rc $?, wall $(( ($(date +%s%N) - start) / 1000000 )) ms"
      # Beside the run directory too: the device tool brings back files a few folders deep only.
      for f in qualification.jsonl summary.json; do
        cp "$out/wall/$i-$r/$f" "$out/wall-$i-$r.$f" 2>/dev/null
      done
      grep -E '"type":"(worker_start|warmed|size_start|size_end)"' \
        "$out/wall/$i-$r/rounds.jsonl" >"$out/wall-$i-$r.sizes.jsonl" 2>/dev/null
      head -n 60 "$out/wall-$i-$r.log" | cut -c1-300
      arm_spans "$out/wall/$i-$r/qualification.jsonl"
    done
    ;;
  full)
    step "kq qualify residual_relu, every good arm, full"
    start=$(date +%s%N)
    "${kq_env[@]}" timeout "${KQ_FULL_TIMEOUT:-540}" "$kq" qualify "$specs/residual_relu.yaml" \
      ${KQ_FULL_ARMS:+--arms "$KQ_FULL_ARMS"} --out "$out/full" 2>&1 | tee "$out/full.txt" |
      tail -n 40
    echo "wall: $(( ($(date +%s%N) - start) / 1000000 )) ms"
    python3 - "$out/full/qualification.jsonl" <<'PY'
import json, sys
cases = [json.loads(l) for l in open(sys.argv[1])]
cases = [r for r in cases if r.get("type") == "case"]
cases.sort(key=lambda r: -r["seconds"])
for r in cases[:24]:
    st = " ".join("%s %.2f" % kv for kv in sorted(r.get("stages", {}).items()))
    print("%-28s %-22s %7.2f s  %s  (%s)" % (r["arm"], r["case"], r["seconds"], st,
                                             r.get("checked_on", "?")))
PY
    arm_spans "$out/full/qualification.jsonl"
    ;;
  first)
    examples="$here/../examples/first_arm"
    step "build examples/first_arm against $kq_dir"
    cmake -S "$examples" -B "$out/first-build" -DCMAKE_PREFIX_PATH="$kq_dir" \
      -DCMAKE_BUILD_TYPE=Release >"$out/first-build.log" 2>&1 &&
      cmake --build "$out/first-build" >>"$out/first-build.log" 2>&1 || {
      tail -n 30 "$out/first-build.log"
      exit 1
    }
    plugin=$(find "$out/first-build" -name 'libkq_first_arm.so' | head -n 1)
    step "kq run residual_relu --quick with the first arms"
    "${kq_env[@]}" "$kq" run "$specs/residual_relu.yaml" --quick --runs-dir "$out/runs" \
      --plugin "$plugin" --python-arms "$examples" \
      --arms cuda_residual_relu,triton_residual_relu,nvrtc_jit,torch_compile 2>&1 |
      tee "$out/first-run.log" | tail -n 30
    ;;
  tests)
    step "nvidia-smi"
    nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,memory.total --format=csv
    step "ctest -L gpu"
    KQ_TEST_OUT="$out/tests" "${kq_env[@]}" ctest --test-dir "$kq_dir/tests" -L gpu \
      ${KQ_GPU_TESTS:+-R "$KQ_GPU_TESTS"} ${KQ_GPU_TESTS_EXCLUDE:+-E "$KQ_GPU_TESTS_EXCLUDE"} \
      --output-on-failure --timeout 540 2>&1 | tee "$out/ctest.log" | tail -n 60
    ;;
  residual)
    step "kq run residual_relu --twice $twice"
    "${kq_env[@]}" "$kq" run "$specs/residual_relu.yaml" --quick --twice "$twice" \
      --out "$out/residual_relu" 2>&1 | tail -n 40
    step "crosscheck at 2^28"
    printf '#!/bin/sh\nexec env LD_LIBRARY_PATH=/usr/local/cuda/lib64 %s "$@"\n' "$kq" >/tmp/kq-env
    chmod +x /tmp/kq-env
    python3 "$here/crosscheck.py" --kq /tmp/kq-env --spec "$specs/residual_relu.yaml" \
      --arm "$twice" --size 268435456 --out "$out/crosscheck" 2>&1 | tail -n 20 |
      tee "$out/crosscheck.txt"
    ;;
  specs)
    for s in silu_mul gelu axpby clamp leaky_relu residual_relu_ieee; do
      step "kq run $s"
      "${kq_env[@]}" "$kq" run "$specs/$s.yaml" --quick --out "$out/$s" \
        --sizes 1048576,16777216,268435456 2>&1 | tail -n 12
    done
    ;;
  deep)
    step "full qualification, 2^31 + 5 included"
    "${kq_env[@]}" "$kq" qualify "$specs/residual_relu.yaml" \
      --arms "$twice,nvrtc_jit" --out "$out/full" 2>&1 | tail -n 8
    step "compute-sanitizer over the CUDA arms"
    "${kq_env[@]}" "$kq" qualify "$specs/residual_relu.yaml" --quick --sanitize all \
      --arms "$twice,inline_ptx_residual_relu,thrust_residual_relu,nvrtc_jit" \
      --out "$out/sanitize" 2>&1 | tail -n 30
    step "compute-sanitizer on broken candidates it should catch"
    "${kq_env[@]}" "$kq" qualify "$specs/residual_relu.yaml" --quick --sanitize memcheck,racecheck \
      --arms broken_cuda_writes_past_end,broken_cuda_race --include-broken \
      --out "$out/sanitize-broken" 2>&1 | tail -n 20
    ;;
  guards)
    # The known-broken candidates of the timing defences beside two good arms: which check
    # rejects each, and what the decision adopts.
    step "kq run residual_relu with the candidates for the timing defences"
    broken=reuse_unchanged,size_shortcut,subnormal_flush_large,content_cache
    cuda_only=empty_capture,legacy_stream,own_stream,per_thread_stream,persisting_l2,background_work
    arms="nvrtc_jit,$twice,$(echo "$broken,$cuda_only" | sed 's/[^,]*/broken_cuda_&/g')"
    arms="$arms,$(echo "$broken" | sed 's/[^,]*/broken_cpu_&/g')"
    # The Python caches on sampled contents, where the python plugin was built (part python).
    # grep -c reads to the end: -q would stop early, and pipefail would take the SIGPIPE as "no".
    if "${kq_env[@]}" "$kq" list 2>/dev/null | grep -c broken_triton_content_cache >/dev/null; then
      arms="$arms,torch_compile,broken_triton_content_cache,broken_torch_content_cache_cuda"
    fi
    "${kq_env[@]}" "$kq" run "$specs/residual_relu.yaml" --quick --include-broken --arms "$arms" \
      --sizes 1048576,268435456 --out "$out/guards" 2>&1 | tail -n 40
    ;;
  isolation)
    # Every good arm that runs here, the candidates of the timing defences, and two arm files
    # from outside the install: each outside or broken file is timed in a worker of its own.
    broken=content_cache,persisting_l2,background_work
    good=$("${kq_env[@]}" "$kq" list 2>/dev/null |
      awk '($3 == "cpu" || $3 == "cuda") && $1 !~ /^broken_/ && !/cannot run here/ && !/known broken/ {print $1}' |
      paste -sd, -)
    arms="$good,$(echo "$broken" | sed 's/[^,]*/broken_cuda_&/g'),broken_cpu_content_cache"
    if "${kq_env[@]}" "$kq" list 2>/dev/null | grep -c broken_triton_content_cache >/dev/null; then
      arms="$arms,broken_triton_content_cache,broken_numpy_tamper,outside_torch_relu,delayed_saboteur"
    fi
    step "kq run residual_relu --quick: $arms"
    start=$(date +%s%N)
    "${kq_env[@]}" "$kq" run "$specs/residual_relu.yaml" --quick --include-broken --arms "$arms" \
      --python-arms "$here/../tests/data/outside_arms" --sizes "${KQ_ISOLATION_SIZES:-2^20,2^24}" \
      --out "$out/isolation" 2>&1 | tail -n 60
    echo "wall: $(( ($(date +%s%N) - start) / 1000000 )) ms"
    ;;
  campaign)
    c="$out/campaign"
    start=$(date +%s)
    if [ ! -f "$c/plan.json" ]; then
      # shellcheck disable=SC2086  # KQ_CAMPAIGN_SPECS: one or more paths
      "${kq_env[@]}" "$kq" sweep ${KQ_CAMPAIGN_SPECS:-$specs/kernelbench} --quick \
        ${KQ_CAMPAIGN_ARMS:+--arms "$KQ_CAMPAIGN_ARMS"} --plan-only --out "$c" || exit 1
    fi
    # Each task not yet completed with its guess of seconds: KQ_CAMPAIGN_EST ("index:seconds
    # ..."), else KQ_CAMPAIGN_RESERVE; a task stopped before is guessed a minute beyond its wall.
    todo=$(python3 - "$c" <<'PY'
import json, os, sys
c = sys.argv[1]
reserve = float(os.environ.get("KQ_CAMPAIGN_RESERVE", "420"))
est = dict(kv.split(":") for kv in os.environ.get("KQ_CAMPAIGN_EST", "").split())
for t in json.load(open(os.path.join(c, "plan.json")))["tasks"]:
    record = os.path.join(c, "tasks", t["id"] + ".json")
    r = json.load(open(record)) if os.path.exists(record) else {}
    if r.get("state") == "completed":
        continue
    guess = float(est.get(str(t["index"]), reserve))
    print(t["index"], int(max(guess, r.get("wall_s", 0) + 60 if r else 0)))
PY
    )
    # Tasks start only where their guess fits what is left, so that none is killed half done;
    # one that does not fit leaves its turn to a shorter one after it.
    while read -r i guess; do
      [ -n "$i" ] || continue
      left=$(( ${KQ_CAMPAIGN_SECONDS:-540} - ($(date +%s) - start) ))
      [ "$left" -ge "$guess" ] || continue
      step "task $i ($left s left, about $guess s)"
      "${kq_env[@]}" timeout "$left" "$kq" sweep-task "$c" "$i" </dev/null 2>&1 | tail -n 1
    done <<< "$todo"
    "${kq_env[@]}" "$kq" merge "$c" >/dev/null 2>&1
    grep -E "^- tasks:" "$c/campaign.md"
    ;;
  *)
    echo "unknown part $part (python, tests, selftest, reference, half, full, residual, specs," \
      "deep, guards, isolation, shaped, kb, broken_shaped, first, gemm, huge_matmul, devices," \
      "campaign)" >&2
    exit 2
    ;;
esac
