"""relu(x + residual) in numpy, on the CPU: a Python arm in its simplest form, and the model of
one. kq gives numpy arrays that view its own buffers (inputs read-only); the arm writes into the
output array it is given and refuses, with kq.Unsupported, any view it does not handle."""
import numpy as np

import kq


class NumpyResidualRelu(kq.Arm):
    name = "numpy_residual_relu"
    family = "numpy"
    device = "cpu"
    version = "1"

    def supports(self, spec):
        if spec.semantics.replace(" ", "") != "relu(x+residual)":
            return "computes relu(x + residual) only"
        if spec.dtype not in ("f32", "f64"):
            return "f32 and f64 only"
        return None

    def prepare(self, problem):
        self.spec = problem.spec

    def run(self, inputs, outputs):
        why = kq.outside_contract(self.spec, inputs, outputs)
        if why:
            raise kq.Unsupported(why)
        x, r = inputs
        (out,) = outputs
        if x.shape != out.shape or r.shape != out.shape:
            raise kq.Unsupported("the inputs and the output must have one shape")
        np.add(x, r, out=out)  # rounded once to the dtype, as the reference is
        # relu: negatives and -0 become +0, NaN stays NaN
        np.copyto(out, 0, where=~(out > 0) & ~np.isnan(out))
