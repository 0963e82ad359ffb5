"""A known-broken candidate that changes, at import, what every arm of its worker shares: it
replaces kq.matches (the test the other arms' supports() use to recognise a formula) with a
wrapper of its own, as a file that patches torch.add or a method of torch.Tensor would. Its arm,
broken_numpy_tamper, computes relu(x + residual) correctly in numpy. kq must reject it by check
`tampering`, before its first case, and put kq.matches back for the other arms of the worker.
"""
import numpy as np

import kq

_real_matches = kq.matches


def _matches(spec, expected, inputs=None):
    return _real_matches(spec, expected, inputs)


kq.matches = _matches


@kq.arm(name="broken_numpy_tamper", family="broken", device="cpu", tensors="numpy",
        computes="relu(x + residual)", dtypes=("f32",), expected_rejection="tampering")
def broken_numpy_tamper(inputs, outputs):
    x, r = inputs
    (out,) = outputs
    np.add(x, r, out=out)
    np.maximum(out, 0, out=out)
    np.add(out, 0, out=out)  # -0 to +0
