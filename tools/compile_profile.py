"""Where torch.compile's first call goes, in a fresh process set up as kq's python plugin sets
it up (TORCHINDUCTOR_COMPILE_THREADS=1, TORCHINDUCTOR_VEC_ISA_OK=1, unless already set): the
first call of relu(x + y) on DEVICE (cpu or cuda) under cProfile, then two more shapes.

    python3 tools/compile_profile.py DEVICE OUT.txt

Run it twice with the same TORCHINDUCTOR_CACHE_DIR to see a warm cache (tools/gpu_check.sh
part compile_profile does)."""
import cProfile
import io
import os
import pstats
import sys
import time

os.environ.setdefault("TORCHINDUCTOR_COMPILE_THREADS", "1")
os.environ.setdefault("TORCHINDUCTOR_VEC_ISA_OK", "1")
device, out = sys.argv[1], sys.argv[2]
t0 = time.time()
import torch  # noqa: E402

print("import torch: %.1f s" % (time.time() - t0), flush=True)


def f(x, y, o):
    o.copy_(torch.relu(x + y))


fn = torch.compile(f, fullgraph=True, dynamic=False if device == "cuda" else None)


def call(n):
    x, y, o = (torch.randn(n, device=device) for _ in range(3))
    t = time.time()
    fn(x, y, o)
    if device == "cuda":
        torch.cuda.synchronize()
    return time.time() - t


profile = cProfile.Profile()
profile.enable()
first = call(4096)
profile.disable()
print("first call (4096 elements): %.1f s" % first, flush=True)
print("then 65536: %.1f s, 2^20: %.1f s" % (call(65536), call(1 << 20)), flush=True)
text = io.StringIO()
pstats.Stats(profile, stream=text).sort_stats("cumulative").print_stats(40)
pstats.Stats(profile, stream=text).sort_stats("tottime").print_stats(20)
with open(out, "w") as f_out:
    f_out.write(text.getvalue())
