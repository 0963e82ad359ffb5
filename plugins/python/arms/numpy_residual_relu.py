"""relu(x + residual) in numpy, on the CPU: a Python arm in its simplest form, and the model of
one. kq gives numpy arrays that view its own buffers (inputs read-only) and has already refused
the views the spec does not admit; the arm writes into the output array it is given and refuses,
with kq.Unsupported, anything else it does not handle."""
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
        if spec.dtype == "f16" and spec.compute != "f32":
            return "f16 computed in float32 only"
        return None

    def run(self, inputs, outputs):
        x, r = inputs
        (out,) = outputs
        if x.shape != out.shape or r.shape != out.shape:
            raise kq.Unsupported("the inputs and the output must have one shape")
        if out.dtype == np.float16:
            # The spec's compute: float32, then one rounding into the f16 output.
            s = np.add(x, r, dtype=np.float32)
            relu(s)
            out[...] = s
            return
        np.add(x, r, out=out)  # rounded once to the dtype, as the reference is
        relu(out)


def relu(a):
    """In place, in two passes without temporaries: negatives become +0, NaN stays NaN (maximum
    propagates it), and adding +0 turns a -0 that maximum may keep into +0."""
    np.maximum(a, 0, out=a)
    np.add(a, 0, out=a)
