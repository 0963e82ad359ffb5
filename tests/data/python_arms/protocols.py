"""Test arms (tests/integration/test_python_arms.cpp): relu(x + residual) on the CPU, reading kq's
tensors through each protocol kq.Tensor offers, so that qualification's misaligned and offset
views show that the pointer, shape and strides arrive intact and that nothing is copied (the
output is written through the same protocol). In every dtype: f16 arrives as numpy's float16
("<f2", DLPack kDLFloat/16) and bf16 as torch.bfloat16 (DLPack kDLBfloat/16); a bf16 tensor has
no array interface, so the numpy protocols decline bf16."""
import numpy as np

import kq

_NUMPY = {"f32": "<f4", "f64": "<f8", "f16": "<f2"}
_TORCH = {"f32": "torch.float32", "f64": "torch.float64", "f16": "torch.float16",
          "bf16": "torch.bfloat16"}


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
        if spec.dtype == "bf16":
            return "numpy has no bfloat16"
        return None

    def run(self, inputs, outputs):
        for t in list(inputs) + list(outputs):
            assert isinstance(t, kq.Tensor)
            assert t.device == "cpu" and t.read_only == (t in inputs)
            self.check_dtype(t)
        x, r, out = (self.array(t) for t in list(inputs) + list(outputs))
        assert self.address(out) == outputs[0].data_ptr
        self.relu_sum(x, r, out)

    def check_dtype(self, t):
        assert t.__array_interface__["typestr"] == _NUMPY[t.dtype]

    def address(self, a):
        return a.__array_interface__["data"][0]

    def relu_sum(self, x, r, out):
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
    """Every dtype, bf16 included: torch reads DLPack's kDLBfloat."""

    name = "py_dlpack_torch"

    def supports(self, spec):
        if not kq.matches(spec, ["input", "input", "add", "relu"]):
            return "relu(x + residual) only"
        return kq.missing("torch")

    def relu_sum(self, x, r, out):
        import torch.nn.functional as F

        out.copy_(F.threshold(x.double() + r.double(), 0.0, 0.0))  # rounded once to the dtype

    def address(self, a):
        return a.data_ptr()

    def check_dtype(self, t):
        if t.dtype == "bf16":
            assert not hasattr(t, "__array_interface__")
        else:
            assert t.__array_interface__["typestr"] == _NUMPY[t.dtype]

    def array(self, t):
        import torch

        v = torch.from_dlpack(t)
        assert v.data_ptr() == t.data_ptr and tuple(v.stride()) == t.strides
        assert str(v.dtype) == _TORCH[t.dtype]
        return v
