"""A known-broken candidate that starts a thread when its file is imported: the thread would run
beside every other arm of the worker, between and during their calls (here it only sleeps; one
that launched GPU work or held the GIL would slow them down). Its arm, broken_numpy_thread,
computes relu(x + residual) correctly in numpy. kq must reject it by check `tampering`, before
its first case, naming the thread.
"""
import threading
import time

import numpy as np

import kq


def _loiter():
    while True:
        time.sleep(0.5)


threading.Thread(target=_loiter, name="loiter", daemon=True).start()


@kq.arm(name="broken_numpy_thread", family="broken", device="cpu", tensors="numpy",
        computes="relu(x + residual)", dtypes=("f32",), expected_rejection="tampering")
def broken_numpy_thread(inputs, outputs):
    x, r = inputs
    (out,) = outputs
    np.add(x, r, out=out)
    np.maximum(out, 0, out=out)
    np.add(out, 0, out=out)  # -0 to +0
