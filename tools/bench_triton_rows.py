"""A quick sweep of Triton softmax shapes at M x N bf16 (default 32768 x 4096), used to choose
triton_shaped's launch parameters (not part of the build; kq's own timing stage is the
measurement of record): the one-program-per-row kernel of _triton_shaped_kernels.py over
num_warps, and a persistent kernel (a program per resident slot walking rows with tl.range's
num_stages pipelining) over programs per SM, warps and stages. triton.testing.do_bench medians
(L2 flushed); every variant's y is compared bit for bit with the first one's.

On the H200 (2026-12-02, bf16 32768 x 4096): one program per row with 8 warps 133 us (97% of the
copy's 129 us), 4 warps 134 us, 16 warps 166 us; the persistent kernel 146 us at best (8 programs
an SM, 4 warps, 1 stage).

Run: python3 tools/bench_triton_rows.py [M] [N]   (from the repository root, on a GPU host)
"""
import sys

sys.path.insert(0, "plugins/python/arms")
import torch
import triton
import triton.language as tl
from triton.testing import do_bench

from _triton_shaped_kernels import kernels


@triton.jit
def softmax_persistent(x_ptr, y_ptr, M, N, stride_x, stride_y, BLOCK: tl.constexpr,
                       STAGES: tl.constexpr):
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    for row in tl.range(tl.program_id(0), M, tl.num_programs(0), num_stages=STAGES):
        r = row.to(tl.int64)
        x = tl.load(x_ptr + r * stride_x + cols, mask=mask, other=-float("inf")).to(tl.float32)
        mx = tl.max(x, axis=0)
        e = tl.exp(x - mx)
        s = tl.sum(e, axis=0)
        y = e * (1.0 / s)
        tl.store(y_ptr + r * stride_y + cols, y.to(y_ptr.dtype.element_ty), mask=mask)


def main():
    m = int(sys.argv[1]) if len(sys.argv) > 1 else 32768
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 4096
    torch.manual_seed(0)
    x = (torch.rand(m, n, device="cuda") * 16 - 8).to(torch.bfloat16)
    ref = torch.empty_like(x)
    y = torch.empty_like(x)
    block = triton.next_power_of_2(n)
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    row = kernels()["softmax_row"]
    runs = []
    for warps in (16, 8, 4):
        runs.append(("row num_warps=%d" % warps,
                     lambda w=warps, o=None: row[(m,)](x, o, n, n, n, BLOCK=block, num_warps=w)))
    for per_sm in (2, 4, 8):
        for warps in (4, 8):
            for stages in (1, 2, 3, 4):
                g = min(m, per_sm * sms)
                runs.append(("persistent %d/SM num_warps=%d stages=%d" % (per_sm, warps, stages),
                             lambda g=g, w=warps, s=stages, o=None: softmax_persistent[(g,)](
                                 x, o, m, n, n, n, BLOCK=block, STAGES=s, num_warps=w)))
    compiled = torch.compile(lambda t: torch.softmax(t.float(), -1).to(torch.bfloat16))
    print("copy %8.1f us" % (do_bench(lambda: y.copy_(x), return_mode="median") * 1e3))
    print("torch.compile %8.1f us" % (do_bench(lambda: compiled(x), return_mode="median") * 1e3))
    first = True
    for name, fn in runs:
        out = ref if first else y
        y.fill_(float("nan"))
        try:
            fn(o=out)
            torch.cuda.synchronize()
            t = do_bench(lambda: fn(o=out), return_mode="median") * 1e3
        except Exception as e:  # out of resources, for one
            print("%-45s failed: %s" % (name, str(e).splitlines()[0]))
            continue
        same = "" if first else ("  same bits" if torch.equal(y.view(torch.int16), ref.view(
            torch.int16)) else "  DIFFERS")
        print("%-45s %8.1f us %6.0f GB/s%s" % (name, t, 4 * m * n / t * 1e-3, same))
        first = False


main()
