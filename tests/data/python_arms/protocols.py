"""Test arms (tests/integration/test_python_arms.cpp): relu(x + residual) on the CPU, reading kq's
tensors through each protocol kq.Tensor offers, so that qualification's misaligned and offset
views show that the pointer, shape and strides arrive intact and that nothing is copied (the
output is written through the same protocol)."""
import numpy as np

import kq


def _relu_sum(x, r, out):
    np.add(x, r, out=out)
    np.copyto(out, 0, where=~(out > 0) & ~np.isnan(out))


class _Protocol(kq.Arm):
    family = "test"
    device = "cpu"
    tensors = "kq"

    def supports(self, spec):
        if not kq.matches(spec, ["input", "input", "add", "relu"]):
            return "relu(x + residual) only"
        return None

    def run(self, inputs, outputs):
        for t in list(inputs) + list(outputs):
            assert isinstance(t, kq.Tensor)
            assert t.device == "cpu" and t.read_only == (t in inputs)
        x, r, out = (self.array(t) for t in list(inputs) + list(outputs))
        assert out.__array_interface__["data"][0] == outputs[0].data_ptr
        _relu_sum(x, r, out)


class ArrayInterface(_Protocol):
    name = "py_array_interface"

    def array(self, t):
        return np.asarray(t)


class DlpackNumpy(_Protocol):
    name = "py_dlpack_numpy"

    def array(self, t):
        a = np.from_dlpack(t)
        if not t.read_only and not a.flags.writeable:  # numpy marks DLPack views read-only
            a = np.asarray(t)
        return a


class DlpackTorch(_Protocol):
    name = "py_dlpack_torch"

    def supports(self, spec):
        return kq.missing("torch") or super().supports(spec)

    def array(self, t):
        import torch

        v = torch.from_dlpack(t)
        assert v.data_ptr() == t.data_ptr and tuple(v.stride()) == t.strides
        return v.numpy()
