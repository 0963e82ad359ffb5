#!/usr/bin/env python3
"""Cross-check kq's timings against independent timers on a GPU host.

For one arm and one size it runs `kq run` (qualify, then time), then times the same work with
timers that share nothing with kq's:

  * ncu's gpu__time_duration.sum of the arm's own kernels, launched by kq's timing worker
    (needs Nsight Compute with access to the counters; clocks left alone with --clock-control
    none; caches flushed before each kernel with --cache-control all, as kq's L2 flush does);
  * triton.testing.do_bench (median, its own L2 flush) of the arm's own kernel: the cubin kq kept
    in the run's artifacts, loaded with the CUDA driver API and launched on PyTorch tensors with
    the grid and block CUPTI recorded in kq's profile. This works for kernels that take the
    cuda_fused FlatArgs (in0, in1, out, n, head); the output is checked bit for bit against
    torch.relu(x + r) first, so only residual_relu is supported. Needs PyTorch and Triton;
  * triton.testing.do_bench of a device-to-device copy of the bytes kq's speed-of-light copy
    moves, against kq's light at that size.

It prints each pair and its ratio; a ratio within 0.97-1.03 is agreement within 3%.

  python3 tools/crosscheck.py --kq dist/kq/bin/kq --spec specs/residual_relu.yaml \
      --arm cuda_fused_residual_relu_v4_b1024 --size 268435456
"""
import argparse
import ctypes
import csv
import glob
import io
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile


def kq_run(args, out):
    cmd = [args.kq, "run", args.spec, "--arms", args.arm, "--sizes", str(args.size), "--quick",
           "--out", out]
    if args.plugin_dir:
        cmd += ["--plugin-dir", args.plugin_dir]
    subprocess.run(cmd, check=True)
    with open(os.path.join(out, "summary.json")) as f:
        summary = json.load(f)
    row = next(r for r in summary["timing"] if r["size"] == args.size)
    arm = next(a for a in row["arms"] if a["arm"] == args.arm)
    profile = arm.get("profile")
    with open(os.path.join(out, "manifest.json")) as f:
        manifest = json.load(f)
    plugin = next(a["plugin_file"] for a in manifest["arms"] if a["name"] == args.arm)
    light = [r for r in map(json.loads, open(os.path.join(out, "rounds.jsonl")))
             if r.get("type") == "light" and r.get("size") == args.size]
    return arm["median_s"], plugin, light, profile


def ncu_kernel_seconds(args, plugin, spec_copy):
    """Median summed kernel time per call of the arm, measured by ncu on kq's timing worker."""
    ncu = shutil.which("ncu")
    if not ncu:
        return None, "ncu is not on PATH"
    cmd = [ncu, "--clock-control", "none", "--cache-control", "all", "--csv", "--kill", "yes",
           "--metrics", "gpu__time_duration.sum", "--launch-count", str(args.ncu_launches),
           "-k", "regex:^(?!.*(clock_probe|memset|Memset)).*$",
           args.kq, "__worker-time", "--spec", spec_copy, "--plugin", plugin, "--arm", args.arm,
           "--sizes", str(args.size)]
    env = dict(os.environ, KQ_NO_CUPTI="1")  # ncu owns the profiling interfaces
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=args.ncu_timeout)
    except subprocess.TimeoutExpired:
        return None, "ncu ran past %d s" % args.ncu_timeout
    rows = [line for line in p.stdout.splitlines() if line.startswith('"')]
    if not rows:
        return None, "ncu printed no metrics (stderr: %s)" % p.stderr.strip()[-300:]
    times = []
    for rec in csv.DictReader(io.StringIO("\n".join(rows))):
        if rec.get("Metric Name") == "gpu__time_duration.sum":
            value = float(rec["Metric Value"].replace(",", ""))
            unit = rec.get("Metric Unit", "nsecond")
            scale = {"nsecond": 1e-9, "usecond": 1e-6, "msecond": 1e-3, "second": 1.0}.get(unit, 1e-9)
            times.append(value * scale)
    if not times:
        return None, "no gpu__time_duration rows"
    # The first launches are warm-up; the arm may launch several kernels per call, which the
    # per-kernel median does not add up: report both and let the reader judge.
    return statistics.median(times[len(times) // 4:]), "%d kernels profiled" % len(times)


class FlatArgs(ctypes.Structure):
    """plugins/cuda_fused/args.hpp: the argument of vector_kernel and scalar_kernel."""
    _fields_ = [("in0", ctypes.c_void_p), ("in1", ctypes.c_void_p), ("out", ctypes.c_void_p),
                ("n", ctypes.c_int64), ("head", ctypes.c_int64)]


def do_bench_kernel_seconds(args, run_dir, profile):
    """The arm's own kernel, from its cubin, timed by triton.testing.do_bench."""
    try:
        import torch
        import triton.testing
    except ImportError as e:
        return None, "PyTorch/Triton unavailable: %s" % e
    if not profile or not profile.get("list"):
        return None, "kq recorded no CUPTI profile for this arm and size (%s)" % (
            profile or {}).get("unavailable", "no profile")
    kernels = profile["list"]
    if len(kernels) != 1:
        return None, "the arm launches %d kernels per call; only one is supported" % len(kernels)
    k = kernels[0]
    name = k["name"]
    if "vector_kernel" not in name and "scalar_kernel" not in name:
        return None, "kernel %s does not take FlatArgs" % name
    cubins = glob.glob(os.path.join(run_dir, "artifacts", args.arm, "*.cubin"))
    cubin = next((c for c in cubins if name.encode() in open(c, "rb").read()), None)
    if cubin is None:
        return None, "no cubin in the run's artifacts holds %s" % name

    n = args.size
    g = torch.Generator(device="cuda").manual_seed(1)
    x = torch.rand(n, device="cuda", generator=g) * 2 - 1
    r = torch.rand(n, device="cuda", generator=g) * 2 - 1
    out = torch.full_like(x, float("nan"))
    torch.cuda.synchronize()  # the primary context is current on this thread from here

    cu = ctypes.CDLL("libcuda.so.1")

    def check(rc, what):
        if rc != 0:
            raise RuntimeError("%s failed with CUresult %d" % (what, rc))

    module, fn = ctypes.c_void_p(), ctypes.c_void_p()
    data = open(cubin, "rb").read()
    check(cu.cuModuleLoadData(ctypes.byref(module), ctypes.c_char_p(data)), "cuModuleLoadData")
    check(cu.cuModuleGetFunction(ctypes.byref(fn), module, name.encode()), "cuModuleGetFunction")
    fa = FlatArgs(x.data_ptr(), r.data_ptr(), out.data_ptr(), n, 0)
    params = (ctypes.c_void_p * 1)(ctypes.cast(ctypes.pointer(fa), ctypes.c_void_p))
    grid, block = k["grid"], k["block"]

    def launch():
        stream = torch.cuda.current_stream().cuda_stream
        check(cu.cuLaunchKernel(fn, grid[0], grid[1], grid[2], block[0], block[1], block[2], 0,
                                ctypes.c_void_p(stream), params, None), "cuLaunchKernel")

    launch()
    torch.cuda.synchronize()
    want = torch.relu(x + r)
    if not torch.equal(out.view(torch.int32), want.view(torch.int32)):
        bad = (out.view(torch.int32) != want.view(torch.int32)).nonzero()[0].item()
        return None, "the kernel's output differs from torch.relu(x + r) at index %d" % bad
    ms = triton.testing.do_bench(launch, return_mode="median")
    return ms * 1e-3, "triton.testing.do_bench, median; %s from %s, grid %s block %s" % (
        name[:60], os.path.basename(cubin), grid, block)


def do_bench_copy_seconds(nbytes):
    try:
        import torch
        import triton.testing
    except ImportError as e:
        return None, "PyTorch/Triton unavailable: %s" % e
    src = torch.empty(nbytes // 4, dtype=torch.float32, device="cuda").uniform_(-1, 1)
    dst = torch.empty_like(src)
    ms = triton.testing.do_bench(lambda: dst.copy_(src), return_mode="median")
    return ms * 1e-3, "triton.testing.do_bench, median"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kq", required=True)
    ap.add_argument("--spec", required=True)
    ap.add_argument("--arm", required=True)
    ap.add_argument("--size", type=int, default=1 << 28)
    ap.add_argument("--plugin-dir")
    ap.add_argument("--ncu-launches", type=int, default=40)
    ap.add_argument("--ncu-timeout", type=int, default=240)
    ap.add_argument("--out", help="keep kq's run directory here (default: a temporary folder)")
    args = ap.parse_args()

    run_dir = args.out or os.path.join(tempfile.mkdtemp(prefix="kq-crosscheck-"), "run")
    kq_s, plugin, light, profile = kq_run(args, run_dir)
    print("kq: %s at %d elements: median %.2f us" % (args.arm, args.size, kq_s * 1e6))

    bench_s, how = do_bench_kernel_seconds(args, run_dir, profile)
    if bench_s:
        print("do_bench kernel: %.2f us (%s); kq / do_bench = %.4f" % (bench_s * 1e6, how,
                                                                    kq_s / bench_s))
    else:
        print("do_bench kernel: not measured (%s)" % how)

    ncu_s, how = ncu_kernel_seconds(args, plugin, os.path.join(run_dir, "spec.yaml"))
    if ncu_s:
        print("ncu: %.2f us (%s); kq / ncu = %.4f" % (ncu_s * 1e6, how, kq_s / ncu_s))
    else:
        print("ncu: not measured (%s)" % how)

    if light:
        kq_copy = statistics.median(r["seconds"] for r in light)
        nbytes = light[0]["bytes"] // 2
        ref, how = do_bench_copy_seconds(nbytes)
        print("kq copy of %d bytes: median %.2f us" % (nbytes, kq_copy * 1e6))
        if ref:
            print("do_bench copy: %.2f us (%s); kq / do_bench = %.4f" % (ref * 1e6, how, kq_copy / ref))
        else:
            print("do_bench: not measured (%s)" % how)
    else:
        print("kq recorded no device copy at this size (CPU arm?)")
    print("run directory: %s" % run_dir)


if __name__ == "__main__":
    sys.exit(main())
