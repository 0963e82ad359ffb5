"""relu(x + residual) in numpy, on the CPU: a Python arm in its simplest form, a function, and the
model of one. kq declines the specs whose semantics are another expression or whose dtype is not
listed (numpy has no bfloat16; f16 is computed in float32), gives numpy arrays that view its own
buffers (inputs read-only) and has already refused the views the spec does not admit; the arm
writes into the output array it is given and refuses, with kq.Unsupported, anything else it does
not handle."""
import numpy as np

import kq


@kq.arm(name="numpy_residual_relu", family="numpy", device="cpu", tensors="numpy",
        computes="relu(x + residual)", dtypes=("f32", "f64", "f16"))
def numpy_residual_relu(inputs, outputs):
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
