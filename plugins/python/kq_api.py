"""kq: the API of arms written in Python, given by kq's python plugin (plugins/python).

An arm is a subclass of kq.Arm in a .py file of plugins/python/arms/, of a folder named in
KQ_PYTHON_ARMS or of `--python-arms DIR`:

    import kq

    class MyArm(kq.Arm):
        name, family, device, version = "my_arm", "triton", "cuda", "1"

        def supports(self, spec):        # None, or why not (a string)
            return None if spec.op == "residual_relu" else "computes residual_relu only"

        def prepare(self, problem):      # problem.spec, .inputs, .outputs, .stream
            pass                         # compile here, on scratch tensors (kq.scratch_like)

        def run(self, inputs, outputs):  # tensors over kq's own buffers, no copy
            ...                          # enqueue the work on torch's current stream

Tensors (the class attribute `tensors`):
    "torch"  torch tensors (torch.from_dlpack), on the arm's device;
    "numpy"  numpy arrays, CPU arms only; inputs are read-only; none for bf16 (numpy has no
             bfloat16: kq refuses the call, so a numpy arm declines bf16 specs in supports());
    "kq"     kq.Tensor, which exposes __dlpack__, __dlpack_device__ and, on CUDA,
             __cuda_array_interface__ (CuPy, numba, cuda-python), or __array_interface__ on the
             CPU; data_ptr, shape, strides (in elements), dtype ("f32", "f64", "f16", "bf16")
             and device as attributes. DLPack gives f16 as kDLFloat and bf16 as kDLBfloat; the
             array interfaces give f16 as "<f2" and are absent (AttributeError) for bf16;
    "auto"   (the default) torch where torch is installed, else numpy on the CPU, kq.Tensor on CUDA.
Shapes and strides are kq's, strides in elements; a view's offset is in its data pointer.

Streams: during prepare() and run() of a CUDA arm that uses torch, torch's current stream is
kq's stream (torch.cuda.ExternalStream), so eager torch, Triton and torch.compile enqueue there.
Other libraries enqueue on kq.stream(), the stream's handle as an int. run() must not wait for
the GPU: kq synchronizes.

Contract: with `checks_contract = True` (the default) kq refuses, before run() sees them, the
views the spec does not admit (ranks, layouts, alignment, aliasing). An arm with narrower needs
raises kq.Unsupported("why") from prepare() or run(). Any other exception becomes that call's
error, with the traceback in the worker's log.

Known-broken candidates set `expected_rejection` to the qualification check that must reject
them (for example "values", "new_values"); kq's selftest counts them.

artifacts() returns what the arm compiled, as (kind, filename, text or bytes) tuples; kq keeps
them under the run's artifacts/<arm>/.
"""

import importlib.util as _importlib_util


class Unsupported(Exception):
    """Raised by an arm's supports(), prepare() or run() to refuse, with the reason."""


class Arm:
    """The base of an arm written in Python (see the module's documentation)."""

    name = None
    family = "python"
    device = "cpu"
    version = "1"
    tensors = "auto"
    checks_contract = True
    expected_rejection = ""

    def supports(self, spec):
        return None

    def prepare(self, problem):
        pass

    def run(self, inputs, outputs):
        raise NotImplementedError(type(self).__name__ + ".run")

    def artifacts(self):
        return []


_stream = 0


def stream():
    """kq's CUDA stream (a cudaStream_t as an int) during prepare() and run(); 0 on the CPU."""
    return _stream


def missing(*modules):
    """Why an arm needing these modules cannot run here ("Triton is not installed"), or None.
    Looks the modules up without importing them."""
    for m in modules:
        if _importlib_util.find_spec(m) is None:
            return "%s is not installed" % {"torch": "PyTorch", "triton": "Triton"}.get(m, m)
    return None


_torch_why = {}


def torch_missing(device):
    """Why torch cannot run an arm on `device` ("cpu" or "cuda") here, or None: not installed,
    built without CUDA, or no CUDA device it can see. Imports torch the first time."""
    if device not in _torch_why:
        why = missing("torch")
        if why is None and device == "cuda":
            import torch

            if not torch.backends.cuda.is_built():
                why = "this PyTorch (%s) was built without CUDA" % torch.__version__
            elif not torch.cuda.is_available():
                why = "PyTorch sees no CUDA device"
        _torch_why[device] = why
    return _torch_why[device]


def scratch_like(tensors):
    """Uninitialized torch tensors with the shapes, strides, dtypes and devices of these: where an
    arm compiles in prepare() without touching the caller's buffers (an output may alias an input,
    and inputs are never written)."""
    import torch

    return [torch.empty_strided(t.shape, t.stride(), dtype=t.dtype, device=t.device) for t in tensors]


def torch_dtype(dtype):
    """The torch dtype of a kq dtype: a name ("f32", "f64", "f16", "bf16", e.g. spec.compute) or
    a spec (its dtype)."""
    import torch

    name = dtype if isinstance(dtype, str) else dtype.dtype
    return {"f32": torch.float32, "f64": torch.float64, "f16": torch.float16,
            "bf16": torch.bfloat16}[name]


def matches(spec, ops):
    """Whether the spec's expression has these node ops in post-order, e.g. ["input", "input",
    "add", "relu"] for relu(x + residual) whatever its inputs are named."""
    return [n.op for n in spec.semantics_ast] == list(ops)


def triton_artifacts(jit_fn, kernel, tag):
    """A compiled Triton kernel (what launching the @triton.jit function `jit_fn` returns) as
    artifacts: the function's source, the kernel's ttir, ttgir, llir, ptx and cubin, and a note of
    num_warps, num_stages, shared memory, registers and spills. `tag` names the files."""
    out = []
    asm = getattr(kernel, "asm", {}) or {}
    suffix = {"ttir": "ttir", "ttgir": "ttgir", "llir": "ll", "ptx": "ptx", "cubin": "cubin"}
    for key, ext in suffix.items():
        if key in asm:
            out.append((key, "%s.%s" % (tag, ext), asm[key]))
    try:
        kernel._init_handles()  # loads the module: registers and spills are known after it
    except Exception:
        pass
    md = getattr(kernel, "metadata", None)
    facts = {
        "num_warps": getattr(md, "num_warps", None),
        "num_stages": getattr(md, "num_stages", None),
        "shared_bytes": getattr(md, "shared", None),
        "registers": getattr(kernel, "n_regs", None),
        "spills": getattr(kernel, "n_spills", None),
        "name": getattr(md, "name", None),
        "hash": getattr(md, "hash", None),
    }
    out.append(("resources", tag + ".resources.txt", "".join("%s: %s\n" % kv for kv in facts.items())))
    src = getattr(jit_fn, "src", None)
    if isinstance(src, str):
        out.append(("source", tag + ".triton.py", src))
    return out


# What follows is the plugin's; arms do not call it.


def _kind(arm):
    kind = getattr(arm, "tensors", "auto")
    if kind == "auto":
        if missing("torch") is None:
            return "torch"
        return "numpy" if arm.device == "cpu" else "kq"
    if kind not in ("torch", "numpy", "kq"):
        raise ValueError('%s.tensors must be "auto", "torch", "numpy" or "kq", not %r' % (arm.name, kind))
    if kind == "numpy" and arm.device != "cpu":
        raise ValueError("%s: numpy arrays are for CPU arms only" % arm.name)
    return kind


class _Calls:
    """One arm's calls: its kind of tensors, their views over kq's buffers (kept by key, so a
    call on the same buffers makes no new objects), and torch's stream over kq's."""

    _keep = 64  # views kept: buffer sets x tensors, with room

    def __init__(self, arm):
        self.arm = arm
        self.kind = _kind(arm)
        self.views = {}
        self.streams = {}
        self.uses_torch_stream = self.kind == "torch" and arm.device == "cuda"

    def view(self, t):
        v = self.views.get(t.key)
        if v is None:
            if len(self.views) >= self._keep:
                self.views.clear()
            v = self._make(t)
            self.views[t.key] = v
        return v

    def _make(self, t):
        if self.kind == "torch":
            if any(s < 0 for s in t.strides):
                raise Unsupported("a torch tensor cannot have a negative stride")
            import torch

            return torch.from_dlpack(t)
        if self.kind == "numpy":
            if t.dtype == "bf16":
                raise Unsupported("numpy has no bfloat16: a numpy arm cannot take bf16 tensors")
            import numpy

            return numpy.asarray(t)
        return t

    def call(self, method, args, stream_ptr):
        global _stream
        _stream = stream_ptr
        try:
            if not self.uses_torch_stream:
                return getattr(self.arm, method)(*args)
            import torch

            s = self.streams.get(stream_ptr)
            if s is None:
                s = self.streams[stream_ptr] = torch.cuda.ExternalStream(stream_ptr)
            with torch.cuda.stream(s):
                return getattr(self.arm, method)(*args)
        finally:
            _stream = 0

    def run(self, inputs, outputs, stream_ptr):
        return self.call("run", ([self.view(t) for t in inputs], [self.view(t) for t in outputs]), stream_ptr)

    def prepare(self, problem, stream_ptr):
        problem.inputs = [self.view(t) for t in problem.inputs]
        problem.outputs = [self.view(t) for t in problem.outputs]
        return self.call("prepare", (problem,), stream_ptr)
