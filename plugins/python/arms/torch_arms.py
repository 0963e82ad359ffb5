"""PyTorch arms for any spec, generated from its expression as nvrtc_jit generates CUDA:

  torch_eager         the expression as a user writes it in PyTorch, one operation at a time,
                      into the caller's output with out= or in place where torch allows;
  torch_compile       torch.compile of the same function writing into the output (Inductor's
                      default mode; fullgraph, so a graph break is an error, not eager code);
  torch_compile_autotune   the same in mode "max-autotune-no-cudagraphs";

on CUDA, and on the CPU as torch_eager_cpu and torch_compile_cpu. The generated source and,
for torch.compile, the code Inductor generated are the arm's artifacts.

kq's relu maps to F.threshold(x, 0, 0), not torch.relu: kq's relu(-0) is +0 and keeps NaN,
which threshold does and torch.relu (clamp_min, -0 stays -0) does not.

Format-2 (shaped) specs: the same arms run the function _torch_shaped.py writes from the spec's
indexed statements (reductions, scans, gathers, views), one torch expression per statement, each
output written once: by eager through its last operation's out= where it has one and no rounding
is left to do (a copy_ after it would be a second pass over memory that eager PyTorch, returning
the operation's result, does not make), else by copy_; torch.compile's function writes each by
copy_, which Inductor folds into its kernel's stores.

Precision: a spec whose compute type is wider than its dtype (f16 and bf16 computed in f32)
is evaluated as its contract says: the inputs are widened (x.to(DT), DT the compute dtype), the
expression is evaluated in DT and the result is rounded once into the output by out.copy_(...)
(round to nearest even). Otherwise everything is in the dtype. Where this PyTorch has no kernel
for an operation in the dtype (torch 1.13's CPU has no erf, silu, gelu or threshold in float16),
the eager arms decline the spec with PyTorch's own message.
"""
import keyword
import math

import _torch_flags
import _torch_shaped
import kq

_UNARY = {
    "neg": "torch.neg({0})",
    "relu": "F.threshold({0}, 0.0, 0.0)",
    "abs": "torch.abs({0})",
    "exp": "torch.exp({0})",
    "log": "torch.log({0})",
    "sqrt": "torch.sqrt({0})",
    "tanh": "torch.tanh({0})",
    "sigmoid": "torch.sigmoid({0})",
    "erf": "torch.erf({0})",
    "gelu": "F.gelu({0})",
    "silu": "F.silu({0})",
}
# Unary ops into the output with out= (gelu and silu through their ATen ops, which have it where
# the functional forms do not; without it the output would take one more pass, a copy).
_UNARY_OUT = {
    "neg": "torch.neg({0}, out=out)",
    "relu": "torch.threshold({0}, 0.0, 0.0, out=out)",
    "abs": "torch.abs({0}, out=out)",
    "exp": "torch.exp({0}, out=out)",
    "log": "torch.log({0}, out=out)",
    "sqrt": "torch.sqrt({0}, out=out)",
    "tanh": "torch.tanh({0}, out=out)",
    "sigmoid": "torch.sigmoid({0}, out=out)",
    "erf": "torch.erf({0}, out=out)",
    "gelu": "torch._C._nn.gelu({0}, out=out)",
    "silu": "torch._C._nn.silu({0}, out=out)",
}
# In-place forms, applied to the output once it holds the operand.
_UNARY_INPLACE = {
    "neg": "{0}.neg_()",
    "relu": "F.threshold_({0}, 0.0, 0.0)",
    "abs": "{0}.abs_()",
    "exp": "{0}.exp_()",
    "log": "{0}.log_()",
    "sqrt": "{0}.sqrt_()",
    "tanh": "{0}.tanh_()",
    "sigmoid": "{0}.sigmoid_()",
    "erf": "{0}.erf_()",
    "silu": "F.silu({0}, inplace=True)",
}
_BINARY = {"add": "add", "sub": "sub", "mul": "mul", "div": "div", "max": "maximum",
           "min": "minimum"}
_COMPARE = {"lt": "lt", "le": "le", "gt": "gt", "ge": "ge", "eq": "eq", "ne": "ne"}
# max(x, c) is x bounded below by c: clamp_min (which keeps a NaN x, as kq's max does).
_CLAMP = {"max": "clamp_min", "min": "clamp_max"}
_COMMUTATIVE = {"add", "mul", "max", "min", "eq", "ne"}
_SWAPPED = {"lt": "gt", "le": "ge", "gt": "lt", "ge": "le", "eq": "eq", "ne": "ne"}
_FOLD = {
    "neg": lambda a: -a, "abs": abs, "add": lambda a, b: a + b, "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
}


def _names(spec):
    """A Python parameter name for each input: its own where it can be one."""
    taken = {"torch", "F", "out", "DT", "math"}
    names = []
    for k, n in enumerate(spec.inputs):
        ok = n.isidentifier() and not keyword.iskeyword(n) and n not in taken and n not in names
        names.append(n if ok else "in%d" % k)
    return names


class _Expr:
    """The expression's nodes as Python text: each node's value ("x", "0.5", "t3") and, for
    comparisons, its boolean form."""

    def __init__(self, spec):
        self.nodes = spec.semantics_ast
        self.inputs = _names(spec)
        self.consts = {}  # node index -> float, for constant nodes and constant-only subtrees
        for i, n in enumerate(self.nodes):
            if n.op == "constant":
                self.consts[i] = n.value
            elif n.op in _FOLD and all(a in self.consts for a in n.args):
                self.consts[i] = _FOLD[n.op](*[self.consts[a] for a in n.args])
        for n in self.nodes:
            if n.op not in _UNARY and n.op not in _BINARY and n.op not in _COMPARE and n.op not in (
                    "constant", "input", "select", "clamp"):
                raise kq.Unsupported("no PyTorch form for %s" % n.op)
        if len(self.nodes) - 1 in self.consts:
            raise kq.Unsupported("the expression is a constant")

    def leaf(self, i):
        n = self.nodes[i]
        if i in self.consts:
            v = self.consts[i]
            return repr(v) if math.isfinite(v) else "float(%r)" % repr(v)
        if n.op == "input":
            return self.inputs[n.input]
        return None

    def is_tensor(self, i):
        return i not in self.consts

    def call(self, i, arg):
        """Node i's value as one torch expression over its operands' texts (arg(k) gives them)."""
        n = self.nodes[i]
        a = n.args
        if n.op in _UNARY:
            return _UNARY[n.op].format(arg(a[0]))
        if n.op in _BINARY or n.op in _COMPARE:
            x, y, op = a[0], a[1], n.op
            if not self.is_tensor(x) and op in _COMMUTATIVE | set(_SWAPPED):
                x, y, op = y, x, _SWAPPED.get(op, op)
            if not self.is_tensor(x):  # constant - t, constant / t: Python's operators
                return "(%s %s %s)" % (arg(x), {"sub": "-", "div": "/"}[op], arg(y))
            if op in ("max", "min") and not self.is_tensor(y):
                return "torch.%s(%s, %s)" % (_CLAMP[op], arg(x), arg(y))
            if op in _COMPARE:
                return "torch.%s(%s, %s).to(DT)" % (_COMPARE[op], arg(x), arg(y))
            return "torch.%s(%s, %s)" % (_BINARY[op], arg(x), arg(y))
        if n.op == "select":
            return "torch.where(%s, %s, %s)" % (self.condition(a[0], arg), arg(a[1]), arg(a[2]))
        if n.op == "clamp":  # min(max(x, lo), hi)
            return "torch.clamp(%s, %s, %s)" % (arg(a[0]), arg(a[1]), arg(a[2]))
        raise kq.Unsupported("no PyTorch form for %s" % n.op)

    def condition(self, i, arg):
        """select's condition as a boolean tensor: a comparison's own, else `c != 0`."""
        n = self.nodes[i]
        if n.op in _COMPARE and self.is_tensor(n.args[0]):
            return "torch.%s(%s, %s)" % (_COMPARE[n.op], arg(n.args[0]), arg(n.args[1]))
        return "(%s != 0)" % arg(i)

    def nested(self, i=None):
        """The whole expression (or node i's) as one nested torch expression."""
        i = len(self.nodes) - 1 if i is None else i
        return self.leaf(i) or self.call(i, self.nested)


def widens(spec):
    """Whether the spec computes in a type wider than its dtype (f16 or bf16 computed in f32)."""
    return spec.compute != spec.dtype


def _widened(e, spec):
    """The lines that widen the inputs to the compute dtype, when the spec computes wider."""
    return ["%s = %s.to(DT)" % (n, n) for n in e.inputs] if widens(spec) else []


def eager_source(spec):
    """The eager function: a temporary per inner operation, the root into `out` (computed in the
    compute dtype and rounded once into `out` by copy_ when that is wider than the dtype)."""
    e = _Expr(spec)
    lines, text = _widened(e, spec), {}

    def arg(k):
        return e.leaf(k) or text[k]

    root = len(e.nodes) - 1
    # The root's chain of unary ops with in-place forms: the operand goes into out, they follow.
    # Not when widening: an in-place op on out would compute on the rounded value and round again.
    chain = []
    r = root
    while not widens(spec) and e.nodes[r].op in _UNARY_INPLACE and e.leaf(
            e.nodes[r].args[0]) is None:
        chain.append(r)
        r = e.nodes[r].args[0]
    # Comparisons read only as a select's condition stay booleans inside the where().
    conditions = {n.args[0] for n in e.nodes if n.op == "select"}
    read = [k for n in e.nodes for k in n.args]  # a node's args are its operands (none for leaves)
    for i, n in enumerate(e.nodes):
        if i >= r:
            break
        if e.leaf(i) is not None:
            continue
        if n.op in _COMPARE and i in conditions and read.count(i) == 1:
            continue
        text[i] = "t%d" % i
        lines.append("t%d = %s" % (i, e.call(i, arg)))
    lines.append("out.copy_(%s)" % e.call(r, arg) if widens(spec) else _into_out(e, r, arg))
    for i in reversed(chain):
        lines.append(_UNARY_INPLACE[e.nodes[i].op].format("out"))
    return _function("eager", e, lines)


def _into_out(e, i, arg):
    """Node i computed into `out`: torch's out= where it has one, else copy_."""
    n = e.nodes[i]
    a = n.args
    if n.op in _UNARY_OUT:
        return _UNARY_OUT[n.op].format(arg(a[0]))
    if n.op in _BINARY:
        x, y = a
        if not e.is_tensor(x) and n.op in _COMMUTATIVE:
            x, y = y, x
        if e.is_tensor(x) and not e.is_tensor(y) and n.op in ("max", "min"):
            return "torch.%s(%s, %s, out=out)" % (_CLAMP[n.op], arg(x), arg(y))
        if e.is_tensor(x):
            return "torch.%s(%s, %s, out=out)" % (_BINARY[n.op], arg(x), arg(y))
    if n.op == "select" and e.is_tensor(a[1]) and e.is_tensor(a[2]):
        return "torch.where(%s, %s, %s, out=out)" % (e.condition(a[0], arg), arg(a[1]), arg(a[2]))
    if n.op == "clamp" and e.is_tensor(a[0]):
        return "torch.clamp(%s, %s, %s, out=out)" % (arg(a[0]), arg(a[1]), arg(a[2]))
    return "out.copy_(%s)" % e.call(i, arg)


def compiled_source(spec):
    """The function torch.compile is given: the expression, nested, copied into out (Inductor
    fuses it into one kernel that stores into out)."""
    e = _Expr(spec)
    return _function("compiled", e, _widened(e, spec) + ["out.copy_(%s)" % e.nested()])


def _function(name, e, lines):
    head = "def %s(%s, out):\n" % (name, ", ".join(e.inputs))
    return head + "".join("    %s\n" % l for l in lines)


def _define(source, name, spec):
    import torch
    import torch.nn.functional as F

    scope = {"torch": torch, "F": F, "math": math, "DT": kq.torch_dtype(spec.compute)}
    exec(compile(source, "<kq %s: %s>" % (name, spec.semantics), "exec"), scope)
    return scope[name]


def _shaped(spec):
    """Whether the spec is a format-2 (shaped) one, with a program of statements."""
    return getattr(spec, "program", None) is not None


def _compile_missing():
    """Why this torch has no torch.compile, or None (torch is importable here)."""
    import torch

    if hasattr(torch, "compile"):
        return None
    return "PyTorch %s has no torch.compile (2.0 or later)" % torch.__version__


def _has_product(spec):
    """Whether a format-2 spec's statements hold a matrix product: a sum of the product of two
    tensors each subscripted by an index the other lacks (torch runs it as a GEMM)."""
    p = getattr(spec, "program", None)
    if p is None:
        return False

    def indices(access):
        return {p.nodes[a].ref for a in access.args if p.nodes[a].kind == "index"}

    for n in p.nodes:
        if n.kind != "reduce" or n.reduction != "sum":
            continue
        body = p.nodes[n.args[0]]
        if body.kind != "apply" or body.op != "mul" or len(body.args) != 2:
            continue
        a, b = (p.nodes[x] for x in body.args)
        if a.kind == "access" and b.kind == "access" and indices(a) - indices(b) and \
                indices(b) - indices(a):
            return True
    return False


def _has_flag(obj, name):
    """hasattr for torch.backends' flags: torch 1.13 asserts on an unknown one."""
    try:
        getattr(obj, name)
        return True
    except (AttributeError, AssertionError):
        return False


class _Reductions(_torch_flags.Settings):
    """cuBLAS may split K and sum the parts in the output's 16-bit type; torch allows it by
    default (allow_bf16/fp16_reduced_precision_reduction). On the H200 a 1025^3 bf16 product
    then had a quarter of its elements beyond float32 accumulation's bound. For each call of
    these arms on a CUDA spec with a product, the flags say what the spec computes in (allowed
    only where that is the 16-bit dtype) and are put back after it: they are torch's
    process-wide state, and a candidate timed in the same worker runs as its author left them.

    So does the f32 products' precision: TF32 ("high") where the spec admits it (compute:
    tf32), else IEEE ("highest", torch's default), set through set_float32_matmul_precision,
    which keeps PyTorch 2.9's per-backend setting and its legacy flag equal (cuBLAS refuses to
    read them unequal; where code beside left them so, it stays as found). Inductor reads it
    when it compiles: the warm-up runs under it too."""

    _FLAGS = ("allow_bf16_reduced_precision_reduction", "allow_fp16_reduced_precision_reduction")

    def __init__(self, spec):
        import torch

        matmul = torch.backends.cuda.matmul
        Flag = _torch_flags.Flag
        allow = spec.compute in ("f16", "bf16")
        wanted = [(Flag.attribute(matmul, f), allow) for f in self._FLAGS if _has_flag(matmul, f)]
        precision = "high" if getattr(spec, "tf32", False) else "highest"
        wanted.append((Flag(torch.get_float32_matmul_precision,
                            torch.set_float32_matmul_precision), precision))
        super().__init__(wanted)


class _TorchArm(kq.Arm):
    family = "torch"
    tensors = "torch"
    version = "1"
    compile_mode = None  # None: eager

    @property
    def kind(self):
        return "eager" if self.compile_mode is None else "compiled"

    def supports(self, spec):
        why = kq.torch_missing(self.device)
        if not why and self.compile_mode is not None:
            why = _compile_missing()
        if why:
            return why
        try:
            self.source_of(spec)
        except kq.Unsupported as e:
            return str(e)
        if self.kind == "eager" and spec.compute in ("f16", "bf16"):
            return self._missing_kernel(spec)
        return None

    def _missing_kernel(self, spec):
        """PyTorch's message when it has no kernel for some operation of the expression in the
        spec's half dtype on this device (a call on zeros shows it), else None."""
        import torch

        if _shaped(spec):
            args = _torch_shaped.example_tensors(spec, self.device)
        else:
            args = [torch.zeros(4, dtype=kq.torch_dtype(spec), device=self.device)
                    for _ in spec.inputs + ["out"]]
        try:
            self._define(self.source_of(spec), spec)(*args)
        except (RuntimeError, NotImplementedError) as e:
            if _shaped(spec) and "not implemented for" not in str(e):
                return None  # not a missing kernel: the run says what it is
            return "PyTorch %s: %s" % (torch.__version__, str(e).splitlines()[0])
        return None

    def source_of(self, spec):
        if _shaped(spec):
            return _torch_shaped.source(spec, self.kind, self.device,
                                        into_outputs=self.kind == "eager")
        return eager_source(spec) if self.kind == "eager" else compiled_source(spec)

    def _define(self, source, spec):
        if _shaped(spec):
            return _torch_shaped.define(source, self.kind, spec)
        return _define(source, self.kind, spec)

    def prepare(self, problem):
        spec = problem.spec
        tf32 = getattr(spec, "tf32", False)
        key = (spec.semantics, spec.dtype, spec.compute, tuple(spec.inputs))
        if _shaped(spec):
            p = spec.program
            key = (spec.op, spec.compute, tf32, tuple(s.text for s in p.statements),
                   tuple((t.name, t.role, t.dtype, tuple(t.shape)) for t in p.tensors),
                   tuple((d.name, d.value) for d in p.params))
        self._reductions = _Reductions(spec) if self.device == "cuda" and _has_product(spec) \
            else None
        if getattr(self, "_key", None) != key:
            self._key = key
            self._shaped = _shaped(spec)
            self._source = self.source_of(spec)
            self._fn = self._build(spec)
            self._codes = {}
        if self._reductions is None:
            self._warm(problem)
        else:
            with self._reductions:  # compiles and autotunes (max-autotune) as it will run
                self._warm(problem)

    def _build(self, spec):
        return self._define(self._source, spec)

    def _warm(self, problem):
        pass

    def run(self, inputs, outputs):
        if self._reductions is not None:
            with self._reductions:
                self._fn(*inputs, *outputs)
        elif self._shaped:
            self._fn(*inputs, *outputs)
        else:
            self._fn(*inputs, outputs[0])

    def artifacts(self):
        if not hasattr(self, "_source"):
            return []
        out = [("source", "torch_%s.py" % self.kind, self._source)]
        for k, code in enumerate(getattr(self, "_codes", {})):
            out.append(("source", "inductor_%d.py" % k, code))
        return out


class _CompiledArm(_TorchArm):
    compile_mode = "default"

    def _build(self, spec):
        import torch
        import torch._dynamo

        # kq calls on many shapes and layouts: never let a recompile limit fall back to eager.
        for limit in ("recompile_limit", "cache_size_limit", "accumulated_recompile_limit",
                      "accumulated_cache_size_limit"):
            if hasattr(torch._dynamo.config, limit):
                setattr(torch._dynamo.config, limit, max(getattr(torch._dynamo.config, limit), 4096))
        fn = self._define(self._source, spec)
        mode = None if self.compile_mode == "default" else self.compile_mode
        # On CUDA, static shapes: Inductor's code for each shape, as a fixed-shape workload gets
        # it. With automatic dynamic shapes the second shape seen (in kq, often a tiny one)
        # makes one Triton kernel for all, its block size tuned for that shape: on the H200 a
        # 2-element hint gave blocks of two elements, and torch_compile ran at 20 GB/s on 2^24
        # bf16 elements. Inductor's C++ loops do not depend on such a hint, and compiling one
        # per shape would cost minutes: the CPU arm keeps automatic dynamic shapes.
        dynamic = False if self.device == "cuda" else None
        return torch.compile(fn, fullgraph=True, mode=mode, dynamic=dynamic)

    def _warm(self, problem):
        """Compiles for these shapes and layouts on scratch tensors (prepare writes nothing of
        the caller's), keeping the code Inductor wrote."""
        args = kq.scratch_like(problem.inputs + problem.outputs)
        if self._shaped:  # gathers read their indices: zeros are in range
            for a in args:
                a.zero_()
        codes = []
        # What torch._inductor.utils.run_and_get_code does, less its torch._dynamo.reset(),
        # which would drop every compiled function in the process (the other torch.compile
        # arms' too) and recompile at every prepare.
        try:
            from unittest import mock

            from torch._inductor.graph import GraphLowering

            with mock.patch.object(GraphLowering, "save_output_code", codes.append):
                self._fn(*args)
        except (ImportError, AttributeError):
            self._fn(*args)
        for c in codes:
            if len(self._codes) < 16:
                self._codes.setdefault(c, None)


class TorchEager(_TorchArm):
    name, device = "torch_eager", "cuda"


class TorchEagerCpu(_TorchArm):
    name, device = "torch_eager_cpu", "cpu"


class TorchCompile(_CompiledArm):
    name, device = "torch_compile", "cuda"


class TorchCompileCpu(_CompiledArm):
    name, device = "torch_compile_cpu", "cpu"


class TorchCompileAutotune(_CompiledArm):
    name, device = "torch_compile_autotune", "cuda"
    compile_mode = "max-autotune-no-cudagraphs"
