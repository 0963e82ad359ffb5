"""relu(x + residual) in numpy, on the CPU: a Python arm in its simplest form, and the model of
one. kq gives numpy arrays that view its own buffers (inputs read-only) and has already refused
the views the spec does not admit; the arm writes into the output array it is given and refuses,
with kq.Unsupported, anything else it does not handle.

f16 (numpy's float16) is computed in float32, as its contract says, and rounded once to f16 by
astype (round to nearest even); bf16 is declined: numpy has no bfloat16."""
import numpy as np

import kq


class NumpyResidualRelu(kq.Arm):
    name = "numpy_residual_relu"
    family = "numpy"
    device = "cpu"
    version = "1"
    tensors = "numpy"

    def supports(self, spec):
        if not kq.matches(spec, ["input", "input", "add", "relu"]):
            return "computes relu(x + residual) only"
        if spec.dtype == "bf16":
            return "numpy has no bfloat16"
        if spec.compute not in ("f32", "f64"):
            return "computes in float32 or float64 only"
        return None

    def prepare(self, problem):
        self._compute = np.dtype({"f32": np.float32, "f64": np.float64}[problem.spec.compute])

    def run(self, inputs, outputs):
        x, r = inputs
        (out,) = outputs
        if x.shape != out.shape or r.shape != out.shape:
            raise kq.Unsupported("the inputs and the output must have one shape")
        # The sum in the compute type, rounded once to it: into out when that is its dtype.
        s = np.add(x, r, out=out) if out.dtype == self._compute else np.add(x, r, dtype=self._compute)
        # relu: negatives and -0 become +0, NaN stays NaN
        np.copyto(s, 0, where=~(s > 0) & ~np.isnan(s))
        if s is not out:
            out[...] = s  # rounded once to f16, to nearest even
