"""An arm from outside kq's install, for the isolation checks on a GPU host (tools/gpu_check.sh
isolation): relu(x + residual) in two torch calls. Correct and slower than the compiled baseline;
kq times it in a worker of its own, beside the references, and that worker is not disturbed."""
import torch

import kq


@kq.arm(name="outside_torch_relu", family="torch", device="cuda", tensors="torch",
        computes="relu(x + residual)", dtypes=("f32",), contiguous_only=True,
        requires=("torch",))
def outside_torch_relu(inputs, outputs):
    x, r = inputs
    (out,) = outputs
    torch.add(x, r, out=out)
    # where(s <= 0, 0, s): NaN stays NaN, -0 becomes +0, as the spec's relu.
    torch.where(out <= 0, torch.zeros((), dtype=out.dtype, device=out.device), out, out=out)
