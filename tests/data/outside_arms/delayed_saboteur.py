"""An arm from outside kq's install that behaves while it is qualified and then disturbs the
process it runs in: after its 1000th call it starts a thread that keeps the GPU busy with matrix
products on a stream of its own. Its outputs stay right. In a shared timing worker that work
would slow every other arm down; kq times this file in a worker of its own, where the references
and the controls run slower than in the clean worker: the worker is disturbed and none of its
arms is adopted (tools/gpu_check.sh isolation)."""
import threading

import torch

import kq

_calls = [0]


def _busy():
    stream = torch.cuda.Stream()
    a = torch.randn(4096, 4096, device="cuda")
    with torch.cuda.stream(stream):
        while True:
            for _ in range(8):
                a @ a
            stream.synchronize()


@kq.arm(name="delayed_saboteur", family="torch", device="cuda", tensors="torch",
        computes="relu(x + residual)", dtypes=("f32",), contiguous_only=True,
        requires=("torch",))
def delayed_saboteur(inputs, outputs):
    x, r = inputs
    (out,) = outputs
    torch.add(x, r, out=out)
    torch.where(out <= 0, torch.zeros((), dtype=out.dtype, device=out.device), out, out=out)
    _calls[0] += 1
    if _calls[0] == 1000:
        threading.Thread(target=_busy, daemon=True).start()
