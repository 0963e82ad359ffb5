"""Known-broken candidates written in Python: relu(x + residual) with one flaw each, as they
happen in Triton and PyTorch code. Each declares the qualification check that must reject it
(`expected_rejection`); kq's selftest counts them. They run only the spec where their flaw can
show: one that drops NaN needs NaN in the domain.

Triton (CUDA):
  broken_triton_unmasked_tail  loads and stores the last block without a mask: it writes past
                               the output's end (output_guard), or faults (cuda_error);
  broken_triton_nan_max        relu as tl.maximum(s, 0), which returns 0 for NaN (values);
  broken_triton_result_cache   keeps the result it computed for these pointers and copies it
                               back on the next call: new inputs under the same pointers get the
                               old result (new_values);
  broken_triton_content_cache  keeps its last result per pointers with 8 sampled input elements,
                               and copies it while those are unchanged: right on unchanged
                               inputs, stale where kq changes them before timed calls
                               (timing_output).
PyTorch (CPU and CUDA, named _cpu and _cuda):
  broken_torch_nan_where       relu as where(s > 0, s, 0), which returns 0 for NaN (values);
  broken_torch_result_cache    the result cache above, in torch (new_values);
  broken_torch_content_cache   the sampled-contents cache above, in torch (timing_output);
  broken_torch_mutates_input   adds the residual into x in place, then relu into out
                               (input_modified).
"""
import kq
from _triton_kernels import kernels as good_kernels
from _triton_kernels import launch

_RESIDUAL_RELU = ["input", "input", "add", "relu"]
_jit = {}


def kernels():
    """The flawed Triton kernels, made at the first use (Triton is imported then)."""
    if _jit:
        return _jit
    import triton
    import triton.language as tl

    @triton.jit
    def unmasked_tail(x_ptr, r_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
        s = tl.load(x_ptr + offs) + tl.load(r_ptr + offs)  # the flaw: no mask
        tl.store(out_ptr + offs, tl.where(s <= 0.0, 0.0, s))

    @triton.jit
    def nan_max(x_ptr, r_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        s = tl.load(x_ptr + offs, mask=mask) + tl.load(r_ptr + offs, mask=mask)
        tl.store(out_ptr + offs, tl.maximum(s, 0.0), mask=mask)  # the flaw: NaN gives 0

    _jit.update(unmasked_tail=unmasked_tail, nan_max=nan_max)
    return _jit


class _Broken(kq.Arm):
    """relu(x + residual), f32, with a flaw; `needs_nan`: runs only specs whose domain has NaN."""

    family = "broken"
    version = "1"
    tensors = "torch"
    needs = ("torch",)
    needs_nan = False

    def supports(self, spec):
        why = kq.missing(*self.needs) or kq.torch_missing(self.device)
        if why:
            return why
        if not kq.matches(spec, _RESIDUAL_RELU) or spec.dtype != "f32":
            return "computes relu(x + residual) in f32 only"
        if self.needs_nan and spec.domain != "ieee":
            return "its flaw shows with NaN only, outside this spec's domain"
        return None


class _Triton(_Broken):
    needs = ("torch", "triton")
    device = "cuda"
    kernel = None

    def run(self, inputs, outputs):
        launch(kernels()[self.kernel], inputs[0], inputs[1], outputs[0])


class BrokenTritonUnmaskedTail(_Triton):
    name, kernel = "broken_triton_unmasked_tail", "unmasked_tail"
    expected_rejection = "output_guard|cuda_error"


class BrokenTritonNanMax(_Triton):
    name, kernel, needs_nan = "broken_triton_nan_max", "nan_max", True
    expected_rejection = "values"


class _ResultCache(_Broken):
    """Computes once per (pointers, length) and replays the kept result afterwards, while the
    call's fingerprint() matches the kept one's (always, here)."""

    expected_rejection = "new_values"

    def compute(self, x, r, out):
        raise NotImplementedError

    def fingerprint(self, x, r, n):
        return None

    def run(self, inputs, outputs):
        import torch

        x, r = inputs
        out = outputs[0]
        n = out.numel()
        mark = self.fingerprint(x, r, n)
        self._kept = getattr(self, "_kept", {})
        key = (x.data_ptr(), r.data_ptr(), out.data_ptr(), n)
        kept = self._kept.get(key)
        if kept is not None and (mark is None or torch.equal(kept[0], mark)):
            out.copy_(kept[1])  # the flaw: the inputs may have changed where it did not look
            return
        self.compute(x, r, out)
        if len(self._kept) > 8:
            self._kept.clear()
        self._kept[key] = (mark, out.clone())


class _ContentCache(_ResultCache):
    """The result cache above, keyed also on 8 sampled input elements: right on unchanged inputs,
    stale where they changed unseen."""

    expected_rejection = "timing_output"

    def fingerprint(self, x, r, n):
        import torch

        if n == 0:
            return None
        at = torch.tensor([k * (n - 1) // 7 for k in range(8)], device=x.device)
        return torch.cat([x.reshape(-1)[at], r.reshape(-1)[at]])


def _torch_relu_into(s, out):
    import torch

    torch.threshold(s, 0.0, 0.0, out=out)


class _TritonCompute:
    """compute() for the caches: the good Triton kernel."""

    device = "cuda"
    needs = ("torch", "triton")

    def compute(self, x, r, out):
        launch(good_kernels()["residual_relu"], x, r, out)


class _TorchCompute:
    """compute() for the caches: torch.add, then relu in place."""

    def compute(self, x, r, out):
        import torch

        torch.add(x, r, out=out)
        _torch_relu_into(out, out)


class BrokenTritonContentCache(_TritonCompute, _ContentCache):
    name = "broken_triton_content_cache"


class BrokenTritonResultCache(_TritonCompute, _ResultCache):
    name = "broken_triton_result_cache"


class _TorchResultCache(_TorchCompute, _ResultCache):
    pass


class _TorchContentCache(_TorchCompute, _ContentCache):
    pass


class _TorchNanWhere(_Broken):
    needs_nan = True
    expected_rejection = "values"

    def run(self, inputs, outputs):
        import torch

        s = inputs[0] + inputs[1]
        torch.where(s > 0, s, torch.zeros_like(s), out=outputs[0])  # the flaw: NaN > 0 is false


class _TorchMutatesInput(_Broken):
    expected_rejection = "input_modified"

    def run(self, inputs, outputs):
        x, r = inputs
        x.add_(r)  # the flaw: the caller's x now holds x + residual
        _torch_relu_into(x, outputs[0])


class BrokenTorchResultCacheCpu(_TorchResultCache):
    name, device = "broken_torch_result_cache_cpu", "cpu"


class BrokenTorchResultCacheCuda(_TorchResultCache):
    name, device = "broken_torch_result_cache_cuda", "cuda"


class BrokenTorchContentCacheCpu(_TorchContentCache):
    name, device = "broken_torch_content_cache_cpu", "cpu"


class BrokenTorchContentCacheCuda(_TorchContentCache):
    name, device = "broken_torch_content_cache_cuda", "cuda"


class BrokenTorchNanWhereCpu(_TorchNanWhere):
    name, device = "broken_torch_nan_where_cpu", "cpu"


class BrokenTorchNanWhereCuda(_TorchNanWhere):
    name, device = "broken_torch_nan_where_cuda", "cuda"


class BrokenTorchMutatesInputCpu(_TorchMutatesInput):
    name, device = "broken_torch_mutates_input_cpu", "cpu"


class BrokenTorchMutatesInputCuda(_TorchMutatesInput):
    name, device = "broken_torch_mutates_input_cuda", "cuda"
