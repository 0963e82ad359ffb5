"""PyTorch for format-2 (shaped) specs: the indexed statements as torch code, one line each.

torch_arms.py's arms run what source() writes for a spec with a program (spec.format == 2):

    def eager(x, y_out):
        x = x.to(DT)
        # mx[m] = max(n, x[m, n])
        mx = x.amax(dim=1)
        # e[m, n] = exp(x[m, n] - mx[m])
        e = torch.exp(x - mx[:, None])
        # s[m] = sum(n, e[m, n])
        s = e.sum(dim=1)
        # y[m, n] = e[m, n] / s[m]
        y_out.copy_(e / s[:, None])

The function takes the inputs, then the outputs (as `NAME_out`), in declaration order, as run()
gets them. Each node's value is a tensor whose dims are index variables (its axes):

  - an access with plain index variables is the tensor itself; operands are aligned where they
    are used (a permute, None for the axes one lacks: `mx[:, None]`); a repeated index is a
    diagonal; a constant subscript selects (`x[:, 0]`); a mixed-radix subscript over a dim whose
    extent it covers exactly (`x[n, g * CG + j]` over a dim of G * CG) is an unflatten, a view;
    one index times a constant step plus a constant offset (`x[m, j + 2]`, `x[m, 2 * j]`) is a
    narrow and a stepped slice, a view too; two indices with constant steps (a pooling's
    overlapping windows, `x[b, c, 2 * i + 3 * p]`) a narrow and an unfold, the window's index
    last; any other subscript (a gather `x[m, t[m]]`, a reversal, two indices times dims in one
    dim) indexes with integer tensors (advanced indexing: torch.arange for the plain indices);
  - a padded input (`pad:`) is first padded all round with F.pad, as far as its reads reach
    (in front a constant, behind worked out from the dims), and its subscripts move by the
    front; a dim read through (e) / S (a transposed convolution's stride) is first spread out
    (spread(): S - 1 pads after each element but the last) and read at e;
  - reductions are sum, prod, amax, amin, argmax, argmin over the axes (argmax and argmin over
    several indices flatten them, the first listed outermost, as kq numbers them); a body
    constant along a reduced index is expanded along it (a view);
  - scans are cumsum and cumprod along their axis, with flip() for reverse and the input moved
    one place (the identity in front: shift()) for exclusive;
  - kq's relu is F.threshold(x, 0, 0) (relu(-0) = +0, NaN kept) and max/min are
    torch.maximum/minimum (NaN propagates), clamp_min/clamp_max against a constant, as in
    torch_arms.py.

Precision: float inputs are widened to the compute type (x = x.to(DT), DT the spec's compute)
where their dtype differs; temporaries stay in DT, unrounded; each output is written once into
the caller's tensor by out.copy_(...), which rounds to nearest even (integer outputs truncate
an integral value exactly, bool takes != 0); a scalar output by out[...] = value, the same copy
(torch 2.11's Inductor drops a copy_ into a 0-d input on the CPU). With into_outputs (eager), an
output of the compute dtype whose statement ends in an operation with an out= form (a pointwise
function, +, -, *, /, maximum, where, a sum or max over dims, a matrix product as torch.mm or
torch.bmm) is written by that operation, `torch.tanh(x, out=y_out)`: no temporary, no copy.
A matrix product of 16-bit operands computed in f32 is the exception, on CUDA: a 16-bit GEMM
accumulating in f32, its result rounded to 16 bits only where it is the output (see _Translator's note). Arithmetic on integers only
(integer inputs, index values, argmax results, integral constants) stays in int64, exact, as
kq's float64 reference is; anything else meeting a float is converted to DT. Gathers index
with int64.

argmax and argmin return the first index of the extreme and, where NaN is present, the first
NaN (kq's rule): torch documents the first of several maximal values, and its CPU and CUDA
kernels compare with `a != a || a > b` (NaN wins) since torch 1.7; torch 1.13 on the CPU gives 1
for both argmax and argmin of [3, nan, 1, 5].

Declined (kq.Unsupported, with the reason): a dim that sizes only temporaries (its value is in
no tensor the arm is given); comparisons and select on constants alone; a padded input read
through a gather or below 0 by an amount that depends on the dims; gelu, silu and sigmoid
of a named constant; nodes or ops this module does not know. Library calls are recognised by
structure, never the spec's op name: a pointwise activation (_torch_activations.py: an
expression that is elu, leaky_relu, softplus, hardsigmoid or silu becomes that one torch call)
and a whole program that is softmax or log-softmax over a matrix's last dim, a mean
cross-entropy or one of four norms (_torch_library.py, by its canonical form). Convolutions and
attention are arms of their own (torch_conv, torch_sdpa): their statements stay statements here.
"""
import keyword
import math

import _index_poly
import _kq_fold
import _torch_activations
import _torch_library
import kq

# Precedence of the generated Python text: an operand of lower precedence is parenthesised.
_ATOM, _UNARY, _MUL, _ADD, _CMP = 100, 90, 80, 70, 60

_UNARY_FN = {
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
# The same into a given tensor (out=), where torch has such a form: eager's last operation
# writes the output itself rather than a temporary that a copy_ moves (a second pass over
# memory, as long as the operation's own at a pointwise op). gelu and silu only through
# torch._C._nn, where this torch has them.
_UNARY_OUT = {"relu": ("torch.threshold", ["0.0", "0.0"]), "abs": ("torch.abs", []),
              "exp": ("torch.exp", []), "log": ("torch.log", []), "sqrt": ("torch.sqrt", []),
              "tanh": ("torch.tanh", []), "sigmoid": ("torch.sigmoid", []),
              "erf": ("torch.erf", []), "gelu": ("torch._C._nn.gelu", []),
              "silu": ("torch._C._nn.silu", [])}
_BINARY_OUT = {"add": "torch.add", "sub": "torch.sub", "mul": "torch.mul", "div": "torch.div"}
# A unary function of a named constant (a param, a dim), in Python.
_UNARY_CONST = {
    "relu": "max({0}, 0.0)", "abs": "abs({0})", "exp": "math.exp({0})", "log": "math.log({0})",
    "sqrt": "math.sqrt({0})", "tanh": "math.tanh({0})", "erf": "math.erf({0})",
}
_OPERATOR = {"add": ("+", _ADD), "sub": ("-", _ADD), "mul": ("*", _MUL), "div": ("/", _MUL),
             "lt": ("<", _CMP), "le": ("<=", _CMP), "gt": (">", _CMP), "ge": (">=", _CMP),
             "eq": ("==", _CMP), "ne": ("!=", _CMP)}
_COMPARE = {"lt", "le", "gt", "ge", "eq", "ne"}
_SWAPPED = {"lt": "gt", "le": "ge", "gt": "lt", "ge": "le", "eq": "eq", "ne": "ne"}
# Ops that keep integers integers: on integer operands alone they run in int64.
_INTEGER_OPS = {"neg", "abs", "add", "sub", "mul", "max", "min", "select", "clamp"}
_INTEGER_KINDS = {"long", "int", "bool", "index"}
_REDUCE = {"sum": "sum", "max": "amax", "min": "amin", "argmax": "argmax", "argmin": "argmin"}
_IDENTITY = {"cumsum": "0", "cumprod": "1"}
_RESERVED = {"torch", "F", "math", "DT", "shift", "spread", "max", "min", "abs", "float", "int",
             "range"}

_SHIFT = '''def shift(t, dim, fill):
    """t moved one place along dim, `fill` in front: an exclusive scan's input."""
    first = torch.full_like(t.narrow(dim, 0, 1), fill)
    return torch.cat([first, t.narrow(dim, 0, t.shape[dim] - 1)], dim)


'''


_SPREAD = '''def spread(t, dim, by, fill):
    """t with by - 1 elements of `fill` after each element but the last along dim: a read
    (e) / by of t is this tensor's element e."""
    shape = list(t.shape)
    shape[dim] = max(0, (shape[dim] - 1) * by + 1)
    out = t.new_full(shape, fill)
    out[(slice(None),) * dim + (slice(None, None, by),)] = t
    return out


'''


class _Val:
    """A node's value in the generated code: `code`, a Python expression of precedence `prec`,
    whose dims run over `axes` (index variables, by number, no one twice). `kind`: "float" (a
    tensor in the compute dtype DT), "long" (int64), "int" (int32), "bool", "index" (an index
    variable's own values: an arange, made where the context says which dtype), or "const" (a
    Python number: a literal, whose value is `number`, or a name, a dim or a param, or arithmetic
    on them). `integral`: a const that is an integer. `call`: where the value is one torch
    function's result that takes out=, that function's name and arguments (text)."""

    def __init__(self, code, axes=(), kind="float", prec=_ATOM, number=None, integral=False,
                 call=None):
        self.code, self.axes, self.kind, self.prec = code, tuple(axes), kind, prec
        self.number, self.integral = number, integral
        self.call = call

    def atom(self):
        return self.code if self.prec >= _ATOM else "(%s)" % self.code


def _has_nn(name):
    """Whether this torch has torch._C._nn.`name` (gelu and silu, with out=)."""
    try:
        import torch

        return hasattr(torch._C._nn, name)
    except ImportError:
        return False


def _unary_call(op, code):
    """(function, arguments) of unary op on `code` for out=, or None."""
    fn, extra = _UNARY_OUT.get(op, (None, []))
    if fn is None or (fn.startswith("torch._C._nn.") and not _has_nn(fn.rsplit(".", 1)[1])):
        return None
    return fn, [code] + extra


def _literal(v, integral=False):
    """A number as Python text: `2` where it is an integer in integer arithmetic, else `2.0`."""
    if integral:
        return str(int(v))
    if math.isnan(v):
        return "math.nan"
    if math.isinf(v):
        return "math.inf" if v > 0 else "-math.inf"
    return repr(float(v))


def _const(v):
    integral = math.isfinite(v) and v == int(v) and abs(v) < 2 ** 53
    return _Val(_literal(v), (), "const", _UNARY if v < 0 or str(v).startswith("-") else _ATOM,
                number=v, integral=integral)


class _Names:
    """Python names for the spec's names: their own where they can be, else with a suffix."""

    def __init__(self):
        self.taken = set(_RESERVED)

    def claim(self, name):
        n = name if name.isidentifier() and not keyword.iskeyword(name) else "t_" + "".join(
            ch if ch.isalnum() else "_" for ch in name)
        while n in self.taken:
            n += "_"
        self.taken.add(n)
        return n


class _Stored:
    """A tensor as the code holds it: `code` names it; its dims are the tensor's dimensions at
    `positions` (an input has them all; a temporary lacks those its value is constant along)."""

    def __init__(self, code, positions, kind, number=None, integral=False, prec=_ATOM):
        self.code, self.positions, self.kind = code, tuple(positions), kind
        self.number, self.integral, self.prec = number, integral, prec


class _Translator:
    def __init__(self, spec, name, device, into_outputs=False):
        p = spec.program
        self.p, self.spec, self.name = p, spec, name
        self.into_outputs = into_outputs
        self.nodes, self.tensors, self.indices = p.nodes, p.tensors, p.indices
        names = _Names()
        inputs = [k for k, t in enumerate(p.tensors) if t.role == "input"]
        outputs = [k for k, t in enumerate(p.tensors) if t.role == "output"]
        self.param_names = {k: names.claim(p.tensors[k].name) for k in inputs}
        self.dim_names = [names.claim(d.name) for d in p.dims]
        self.const_names = [names.claim(d.name) for d in p.params]
        self.local = {}  # tensor -> its local name (temporaries, outputs read later)
        read = {n.ref for n in p.nodes if n.kind == "access"}
        for k, t in enumerate(p.tensors):
            if t.role == "temporary" or (t.role == "output" and k in read):
                self.local[k] = names.claim(t.name)
        for k in outputs:
            self.param_names[k] = names.claim(p.tensors[k].name + "_out")
        self.params = inputs + outputs
        self.inputs, self.outputs = inputs, outputs
        self.dims_used, self.consts_used = set(), set()
        self.uses_shift = self.uses_spread = False
        self.stored = {}
        self.lines = []
        for k in inputs:
            t = p.tensors[k]
            kind = {"i32": "int", "i64": "long", "bool": "bool"}.get(t.dtype, "float")
            self.stored[k] = _Stored(self.param_names[k], range(len(t.shape)), kind)
        # A product of two 16-bit operands computed in f32 (spec.program.matmul, A and B of
        # one f16 or bf16 type) runs as a 16-bit GEMM accumulating in f32, as F.linear in bf16
        # does, never on widened operands (on the H200 an f32 GEMM with TF32 off runs at 50
        # TFLOP/s, the bf16 one at 700). Its f32 sums may be rounded to 16 bits only where the
        # contract rounds them too: a bare product into an output of the operands' type
        # (einsum). Before an epilogue (a bias, gelu) that rounding is outside the contract
        # (under cancellation, many ulps of the output), so the product must come back in f32:
        # torch.mm(..., out_dtype=DT) where this torch has it (CUDA, 2.8 on), else the
        # operands are widened. torch_arms.py also turns off cuBLAS's reduced-precision
        # split-K reductions (which round partial sums to 16 bits) for the length of each call. On the CPU the operands are
        # widened: torch 1.13's bf16 einsum there rounds its sums to bf16.
        self.narrow, self.mm_f32 = set(), False
        form = getattr(p, "matmul", None)
        if form is not None and spec.compute == "f32" and device == "cuda":
            a, b = inputs[form.a], inputs[form.b]
            dtype = p.tensors[a].dtype
            if dtype in ("f16", "bf16") and dtype == p.tensors[b].dtype:
                st = p.statements[0]
                if p.nodes[st.root].kind == "reduce" and p.tensors[st.tensor].dtype == dtype:
                    self.narrow = {a, b}
                elif form.batch == 0 and form.m_dims == 1 and form.n_dims == 1 and _mm_out_dtype():
                    self.narrow, self.mm_f32 = {a, b}, True
        self.dim_index = {d.name: i for i, d in enumerate(p.dims)}
        self.spread = {}  # padded input -> per dim, S of its reads (e) / S
        # Where a dim's value is read: the first input, else output, it sizes.
        self.dim_source = {}
        for k in self.params:
            for pos, e in enumerate(p.tensors[k].shape):
                if isinstance(e, str) and e not in self.dim_source:
                    self.dim_source[e] = (k, pos)
        self.device = "%s.device" % self.param_names[self.params[0]]
        self.device_name = device  # "cpu" or "cuda": where the arm runs
        self.lhs = ()
        self.plan_pads()

    # ---- names of dims, params, extents

    def dim(self, name):
        if name not in self.dim_source:
            raise kq.Unsupported(
                "dim %s sizes no input or output: its value is in no tensor the arm is given"
                % name)
        self.dims_used.add(name)
        return self.dim_names[self.dim_index[name]]

    def extent(self, e):
        return self.dim(e) if isinstance(e, str) else str(int(e))

    def index_extent(self, v):
        return self.extent(self.indices[v].extent)

    # ---- conversions

    def as_float(self, v):
        """v's text in float arithmetic, and its precedence."""
        if v.kind in ("float", "const"):
            return v.code, v.prec
        if v.kind == "index":
            return "torch.arange(%s, dtype=DT, device=%s)" % (
                self.index_extent(v.axes[0]), self.device), _ATOM
        return "%s.to(DT)" % v.atom(), _ATOM

    def as_long(self, v):
        """v's text in integer arithmetic (int64 tensors, Python ints), and its precedence."""
        if v.kind == "const":
            return (_literal(v.number, True) if v.number is not None else v.code), v.prec
        if v.kind == "long":
            return v.code, v.prec
        if v.kind == "index":
            return "torch.arange(%s, device=%s)" % (self.index_extent(v.axes[0]), self.device), \
                _ATOM
        return "%s.long()" % v.atom(), _ATOM

    def materialize(self, v, integer):
        """v as a tensor Val of kind long (integer) or float."""
        code, prec = self.as_long(v) if integer else self.as_float(v)
        kind = "long" if integer else "float"
        if v.kind == "const":
            dtype = "torch.long" if integer else "DT"
            return _Val("torch.tensor(%s, dtype=%s, device=%s)" % (code, dtype, self.device), (),
                        kind)
        return _Val(code, v.axes, kind, prec)

    # ---- axes

    def order_key(self, a):
        return (0, self.lhs.index(a)) if a in self.lhs else (1, a)

    def result_axes(self, vals):
        """The axes of an elementwise result: the statement's order (its left-hand side's, then
        the reductions' indices) where every operand already follows it, else the axes of the
        operand with most, then the others' in order (the large operand is never permuted)."""
        union = []
        for v in vals:
            union += [a for a in v.axes if a not in union]
        canonical = sorted(union, key=self.order_key)
        if all(list(v.axes) == [a for a in canonical if a in v.axes] for v in vals):
            return tuple(canonical)
        base = max(vals, key=lambda v: len(v.axes))
        return tuple(base.axes) + tuple(a for a in union if a not in base.axes)

    @staticmethod
    def aligned(code, prec, axes, target):
        """code (over axes) as text that broadcasts against a tensor over target: permuted into
        target's order, None where it lacks an axis that precedes one of its own or follows."""
        if not axes:
            return code, prec
        pos = [target.index(a) for a in axes]
        atom = code if prec >= _ATOM else "(%s)" % code
        if pos != sorted(pos):
            perm = sorted(range(len(pos)), key=lambda k: pos[k])
            if len(perm) == 2:
                code = "%s.T" % atom
            else:
                code = "%s.permute(%s)" % (atom, ", ".join(str(k) for k in perm))
            atom, prec, pos = code, _ATOM, sorted(pos)
        items = [":" if k in pos else "None" for k in range(pos[0], len(target))]
        while items and items[-1] == ":":
            items.pop()
        if "None" in items:
            return "%s[%s]" % (atom, ", ".join(items)), _ATOM
        return code, prec

    def expanded(self, v, axes, integer):
        """v as a tensor over all of `axes` (an expand() view where it lacks some)."""
        t = self.materialize(v, integer)
        if set(t.axes) == set(axes):
            return t
        target = tuple(t.axes) + tuple(a for a in axes if a not in t.axes)
        if t.axes:
            code, prec = self.aligned(t.code, t.prec, t.axes, target)
        else:
            code, prec = "%s[%s]" % (t.atom(), ", ".join(["None"] * len(target))), _ATOM
        sizes = ["-1"] * len(t.axes) + [self.index_extent(a) for a in target[len(t.axes):]]
        atom = code if prec >= _ATOM else "(%s)" % code
        return _Val("%s.expand(%s)" % (atom, ", ".join(sizes)), target, t.kind)

    # ---- nodes

    def value(self, i):
        n = self.nodes[i]
        kind = n.kind
        if kind == "number":
            return _const(n.value)
        if kind == "param":
            self.consts_used.add(n.ref)
            return _Val(self.const_names[n.ref], (), "const")
        if kind == "dim":
            return _Val(self.dim(self.p.dims[n.ref].name), (), "const", integral=True)
        if kind == "index":
            return _Val("", (n.ref,), "index")
        if kind == "access":
            return self.access(n)
        if kind == "apply":
            return self.apply(n)
        if kind == "reduce":
            return self.reduce(n)
        if kind == "scan":
            return self.scan(n)
        raise kq.Unsupported("no PyTorch form for a %s node" % kind)

    def apply(self, n):
        act = self.activation(n)
        if act is not None:
            return act
        op = n.op
        args = [self.value(a) for a in n.args]
        if op in _kq_fold.FOLD and all(a.kind == "const" and a.number is not None for a in args):
            try:
                return _const(_kq_fold.FOLD[op](*[a.number for a in args]))
            except (ValueError, OverflowError, ZeroDivisionError):
                pass
        if all(a.kind == "const" for a in args):
            return self.apply_const(op, args)
        operands = args[1:] if op == "select" else args  # select's condition is not a value
        integer = self.integer(op, operands)
        if op == "select":
            return self.select(args, integer)
        if op in _COMPARE:
            return self.compare(op, args)
        tensors = [a for a in args if a.kind != "const"]
        axes = self.result_axes(tensors)

        def text(a):
            code, prec = self.as_long(a) if integer else self.as_float(a)
            return self.aligned(code, prec, a.axes, axes)

        kind = "long" if integer else "float"

        def called(fn, operands):
            return _Val("%s(%s)" % (fn, ", ".join(operands)), axes, kind, call=(fn, operands))

        if op == "neg":
            code, prec = text(args[0])
            return _Val("-%s" % (code if prec > _UNARY else "(%s)" % code), axes, kind, _UNARY,
                        call=("torch.neg", [code]))
        if op in _UNARY_FN:
            code, _ = text(args[0])
            if integer and op == "abs":
                return _Val("torch.abs(%s)" % code, axes, kind)
            return _Val(_UNARY_FN[op].format(code), axes, "float", call=_unary_call(op, code))
        if op in ("add", "sub", "mul", "div"):
            sym, level = _OPERATOR[op]
            (a, pa), (b, pb) = text(args[0]), text(args[1])
            # torch.add and the others take a number second only.
            first, second = (a, b) if args[0].kind != "const" else (b, a)
            call = None
            if args[0].kind != "const" or op in ("add", "mul"):
                call = (_BINARY_OUT[op], [first, second])
            a = a if pa >= level else "(%s)" % a
            b = b if pb > level else "(%s)" % b
            return _Val("%s %s %s" % (a, sym, b), axes, kind, level, call=call)
        if op in ("max", "min"):
            x, y = args
            if x.kind == "const":
                x, y = y, x
            if y.kind == "const":
                fn = "clamp_min" if op == "max" else "clamp_max"  # max(x, c): x bounded below
                return called("torch." + fn, [text(x)[0], text(y)[0]])
            fn = "maximum" if op == "max" else "minimum"
            return called("torch." + fn, [text(x)[0], text(y)[0]])
        if op == "clamp":
            v = called("torch.clamp", [text(a)[0] for a in args])
            if (args[1].kind == "const") != (args[2].kind == "const"):
                v.call = None  # a number and a tensor as bounds: no out= form for that
            return v
        raise kq.Unsupported("no PyTorch form for %s" % op)

    def activation(self, n):
        """A pointwise activation that torch runs in one kernel (_torch_activations), as that
        call; None where n is none, its operand is not a float tensor (integer arithmetic stays
        exact), this torch lacks the function or computes it less precisely than the compute
        dtype allows."""
        m = _torch_activations.match(self.nodes, n)
        if m is None or not _has_nn(m.fn) or \
                not _torch_activations.accurate(m.fn, self.spec.compute, self.device_name):
            return None
        x = self.value(m.x)
        if x.kind != "float":
            return None
        fn = "torch._C._nn." + m.fn
        args = [x.code] + [self.ratio(a) for a in m.args]
        return _Val("%s(%s)" % (fn, ", ".join(args)), x.axes, "float", call=(fn, args))

    def ratio(self, r):
        """A number, or a _torch_activations.Ratio of constant nodes, as Python text."""
        if not isinstance(r, _torch_activations.Ratio):
            return _literal(r)

        def product(nodes):
            return " * ".join(self.value(i).atom() for i in nodes) or "1.0"

        if not r.under:
            return product(r.over)
        return "(%s) / (%s)" % (product(r.over), product(r.under))

    @staticmethod
    def integer(op, operands):
        """Whether the op runs in int64: it keeps integers integers, and its operands are
        integers, one at least an integer tensor or an index (a comparison's 0/1 times 2 is
        float arithmetic, as it reads)."""
        return op in _INTEGER_OPS and all(
            a.kind in _INTEGER_KINDS or (a.kind == "const" and a.integral) for a in operands) \
            and any(a.kind in ("long", "int", "index") for a in operands)

    def apply_const(self, op, args):
        """An op on constants of which some are names (dims, params): Python arithmetic."""
        integral = op in _INTEGER_OPS and all(a.integral for a in args)

        def text(a):
            if a.number is not None:
                return _literal(a.number, integral), (_UNARY if a.number < 0 else _ATOM)
            return a.code, a.prec

        if op == "neg":
            code, prec = text(args[0])
            return _Val("-%s" % (code if prec > _UNARY else "(%s)" % code), (), "const", _UNARY,
                        integral=integral)
        if op in ("add", "sub", "mul", "div"):
            sym, level = _OPERATOR[op]
            (a, pa), (b, pb) = text(args[0]), text(args[1])
            a = a if pa >= level else "(%s)" % a
            b = b if pb > level else "(%s)" % b
            return _Val("%s %s %s" % (a, sym, b), (), "const", level,
                        integral=integral and op != "div")
        if op in ("max", "min") and integral:
            return _Val("%s(%s, %s)" % (op, text(args[0])[0], text(args[1])[0]), (), "const",
                        integral=True)
        if op in _UNARY_CONST:
            return _Val(_UNARY_CONST[op].format(text(args[0])[0]), (), "const",
                        integral=integral)
        raise kq.Unsupported("%s of constants alone (%s): no PyTorch form here"
                             % (op, ", ".join(a.code for a in args)))

    def compare(self, op, args):
        x, y = args
        if x.kind == "const":  # constant < t: t > constant
            x, y, op = y, x, _SWAPPED[op]
        integer = all(a.kind in _INTEGER_KINDS or (a.kind == "const" and a.integral)
                      for a in args)
        axes = self.result_axes([a for a in (x, y) if a.kind != "const"])
        sym, level = _OPERATOR[op]
        texts = []
        for a in (x, y):
            code, prec = self.as_long(a) if integer else self.as_float(a)
            code, prec = self.aligned(code, prec, a.axes, axes)
            texts.append(code if prec > level else "(%s)" % code)
        return _Val("%s %s %s" % (texts[0], sym, texts[1]), axes, "bool", level)

    def condition(self, c):
        if c.kind == "bool":
            return c
        if c.kind == "const":
            raise kq.Unsupported("select on a constant condition (%s)" % c.code)
        code, prec = self.as_float(c) if c.kind == "float" else self.as_long(c)
        return _Val("%s != 0" % (code if prec > _CMP else "(%s)" % code), c.axes, "bool", _CMP)

    def select(self, args, integer):
        c = self.condition(args[0])
        a, b = args[1], args[2]
        tensors = [c] + [v for v in (a, b) if v.kind != "const"]
        axes = self.result_axes(tensors)
        if a.kind == "const" and b.kind == "const" and not integer:
            a = self.materialize(a, False)  # torch.where on two Python floats would be float32
        texts = [self.aligned(c.code, c.prec, c.axes, axes)[0]]
        for v in (a, b):
            code, prec = self.as_long(v) if integer else self.as_float(v)
            texts.append(self.aligned(code, prec, v.axes, axes)[0])
        # torch.where's out= form takes two tensors.
        call = ("torch.where", texts) if a.kind != "const" and b.kind != "const" else None
        return _Val("torch.where(%s)" % ", ".join(texts), axes, "long" if integer else "float",
                    call=call)

    # ---- accesses

    def subscript_poly(self, i):
        """A subscript as a polynomial in index variables and dims, or None (a gather, or not
        affine)."""
        n = self.nodes[i]
        if n.kind == "index":
            return {(n.ref, ()): 1}
        if n.kind == "number":
            if n.value != int(n.value):
                return None
            return {(None, ()): int(n.value)} if n.value else {}
        if n.kind == "dim":
            return {(None, (self.p.dims[n.ref].name,)): 1}
        if n.kind == "apply" and n.op in ("add", "sub", "mul", "neg"):
            parts = [self.subscript_poly(a) for a in n.args]
            if any(q is None for q in parts):
                return None
            if n.op == "neg":
                return {k: -c for k, c in parts[0].items()}
            if n.op == "mul":
                return _index_poly.mul(parts[0], parts[1])
            return _index_poly.add(parts[0], parts[1], 1 if n.op == "add" else -1)
        return None

    def view_item(self, sub, extent, shift=0):
        """How one subscript (plus `shift`, a padded input's front) reads its dim as a view:
        ("axis", [v]), ("slice", [v], offset, step), ("window", [v, w], offset, step of v, step
        of w), ("split", [variables, outermost first], whether they cover the dim exactly),
        ("const", None), or None (advanced indexing). `extent` None: the dim's length is not
        the tensor's (a padded input's), so no index covers it as it is."""
        poly = self.subscript_poly(sub)
        if poly is None:
            return None
        if shift:
            poly = _index_poly.add(poly, {(None, ()): shift})
        terms = {v: (c, d) for (v, d), c in poly.items() if v is not None}
        if len(terms) != len([k for k in poly if k[0] is not None]):
            return None  # an index variable in two terms (g * C + g)
        if not terms:
            return ("const", None)
        # One variable times a constant step, plus a constant offset (a window's x[m, j + 2], a
        # stride's x[m, 2 * j], an index over a shorter range than its dim): a slice, a view.
        if len(terms) == 1 and all(k == (None, ()) for k in poly if k[0] is None):
            v, (step, dims) = next(iter(terms.items()))
            offset = poly.get((None, ()), 0)
            if not dims and step >= 1 and offset >= 0:
                if (step, offset) == (1, 0) and extent is not None and \
                        self.indices[v].extent == extent:
                    return ("axis", [v])
                return ("slice", [v], offset, step)
        # Two variables, each times a constant step, plus a constant offset (a pooling's or a
        # convolution's x[b, c, 2 * i + 3 * p - 1] once padded): overlapping windows, a view
        # through unfold.
        if len(terms) == 2 and all(not d and c >= 1 for c, d in terms.values()) and \
                all(k == (None, ()) for k in poly if k[0] is None):
            offset = poly.get((None, ()), 0)
            # The window's place: the statement's own index, else the larger step. Disjoint
            # windows from 0 (a step the other's extent) are a split, below.
            (v, (a, _)), (w, (b, _)) = sorted(
                terms.items(), key=lambda x: (x[0] not in self.lhs, -x[1][0]))
            disjoint = offset == 0 and b == 1 and self.indices[w].extent == a
            if offset >= 0 and not disjoint:
                return ("window", [v, w], offset, a, b)
        if (None, ()) in poly or any(k[0] is None for k in poly):
            return None  # an offset by a dim (a reversal): advanced indexing
        if len(terms) == 1 and list(terms.values())[0] == (1, ()):
            return ("axis", list(terms))
        # Mixed radix: the innermost variable's coefficient is 1, each next one's the product of
        # the extents inside it, and the outermost's times its extent the dim's extent.
        chain, current, left = [], (1, ()), dict(terms)
        while left:
            found = [v for v, m in left.items() if m == current]
            if len(found) != 1:
                return None
            v = found[0]
            chain.append(v)
            del left[v]
            current = _index_poly.times(current, _index_poly.monomial(self.indices[v].extent))
        # Over a dim longer than the variables cover (its extent another dim), the view is of the
        # dim's first G * CG elements: in range wherever the subscripts are.
        return ("split", chain[::-1], current == _index_poly.monomial(extent))

    def access(self, n):
        t = self.tensors[n.ref]
        s = self.stored[n.ref]
        if s.kind == "const":
            return _Val(s.code, (), "const", s.prec, number=s.number, integral=s.integral)
        subs = [n.args[p] for p in s.positions]
        front, behind = self.pads.get(n.ref, (None, None))
        if any(self.read_position(sub) != sub for sub in subs):
            if front is None:
                raise kq.Unsupported("a subscript (e) / S of %s, which declares no pad, is not "
                                     "translated" % t.name)
            subs = [self.read_position(sub) for sub in subs]
        if front is None:
            items = [self.view_item(sub, t.shape[p]) for sub, p in zip(subs, s.positions)]
        else:  # a padded dim is not the tensor's length
            items = [self.view_item(sub, None if behind[p] else t.shape[p], front[p])
                     for sub, p in zip(subs, s.positions)]
        if any(it is None for it in items):
            return self.gather(s, subs, front)
        code, prec = s.code, s.prec
        atom = code if prec >= _ATOM else "(%s)" % code
        # Constant subscripts select: x[:, 0].
        if any(it[0] == "const" for it in items):
            sel = []
            for it, sub, p in zip(items, subs, s.positions):
                if it[0] == "const":
                    c = self.shifted(self.value(sub), front[p] if front else 0)
                    sel.append(self.as_long(c)[0])
                else:
                    sel.append(":")
            while sel and sel[-1] == ":":
                sel.pop()
            atom = "%s[%s]" % (atom, ", ".join(sel))
        kept = [it for it in items if it[0] != "const"]
        # Slices narrow their dim (rank kept): x.narrow(1, 2, NO), then every step-th element.
        # Windows narrow it to what they read, then unfold it: dim k runs over the windows, a
        # new last dim within one (every step-th element of it).
        for k, it in enumerate(kept):
            if it[0] == "slice":
                _, (v,), offset, step = it
                n = self.index_extent(v)
                length = n if step == 1 else "%d * (%s - 1) + 1" % (step, n)
                atom = "%s.narrow(%d, %d, %s)" % (atom, k, offset, length)
                if step > 1:
                    atom = "%s[%s::%d]" % (atom, ":, " * k, step)
            elif it[0] == "window":
                _, (v, w), offset, a, b = it
                size = self.reach(b, w, 1)
                length = self.reach(a, v, size)
                atom = "%s.narrow(%d, %d, %s).unfold(%d, %s, %d)" % (atom, k, offset, length, k,
                                                                     size, a)
                if b > 1:
                    atom = "%s[..., ::%d]" % (atom, b)
        # Mixed-radix subscripts unflatten their dim: x.unflatten(1, (G, CG)); last dim first.
        for k in range(len(kept) - 1, -1, -1):
            if kept[k][0] == "split":
                sizes = [self.index_extent(v) for v in kept[k][1]]
                if not kept[k][2]:
                    atom = "%s.narrow(%d, 0, %s)" % (atom, k, " * ".join(sizes))
                atom = "%s.unflatten(%d, (%s))" % (atom, k, ", ".join(sizes))
        axes = [v for it in kept for v in (it[1][:1] if it[0] == "window" else it[1])]
        axes += [it[1][1] for it in kept if it[0] == "window"]
        # A repeated index is a diagonal, which torch puts last.
        while len(set(axes)) != len(axes):
            v = next(a for a in axes if axes.count(a) > 1)
            d1 = axes.index(v)
            d2 = axes.index(v, d1 + 1)
            atom = "%s.diagonal(0, %d, %d)" % (atom, d1, d2)
            axes = [a for k, a in enumerate(axes) if k not in (d1, d2)] + [v]
        return _Val(atom, axes, s.kind)

    def reach(self, step, v, then):
        """The text of step * (extent of v - 1) + then (then an int or text): a number where both
        are numbers."""
        n = self.index_extent(v)
        if n.isdigit() and isinstance(then, int):
            return str(step * (int(n) - 1) + then)
        scaled = "%s - 1" % n if step == 1 else "%d * (%s - 1)" % (step, n)
        return "%s + %s" % (scaled, then)

    def gather(self, s, subs, front=None):
        """Advanced indexing: one int64 index per dim, broadcast over the union of their axes
        (each moved by `front`, a padded input's, where given)."""
        idx = [self.value(sub) for sub in subs]
        if front is not None:
            idx = [self.shifted(v, front[p]) for v, p in zip(idx, s.positions)]
        union = []
        for v in idx:
            union += [a for a in v.axes if a not in union]
        axes = tuple(sorted(union, key=self.order_key))
        texts = []
        for v in idx:
            code, prec = self.as_long(v)
            texts.append(self.aligned(code, prec, v.axes, axes)[0])
        code = s.code if s.prec >= _ATOM else "(%s)" % s.code
        return _Val("%s[%s]" % (code, ", ".join(texts)), axes, s.kind)

    def shifted(self, v, by):
        """An index value moved by the constant `by`."""
        if not by:
            return v
        code, prec = self.as_long(v)
        atom = code if prec > _ADD else "(%s)" % code
        return _Val("%s + %d" % (atom, by), v.axes, "const" if v.kind == "const" else "long",
                    _ADD)

    # ---- padded inputs

    def plan_pads(self):
        """Each padded input's F.pad, per dim: in front a constant, the most any read goes below
        0; behind the text of the most any read goes past the end. Its reads move by the front.
        A read whose lowest subscript depends on the dims, or that is not affine (a gather), is
        declined."""
        self.pads = {}
        for k in self.inputs:
            t = self.tensors[k]
            if getattr(t, "pad", None) is None:
                continue
            front, behind = [0] * len(t.shape), [[] for _ in t.shape]
            # A dim read through (e) / S (a transposed convolution's stride) is read as x
            # spread out by S, S - 1 pads after each element but the last, at e.
            spread = self.spreads(k)
            for d, sub in self.subscripts_of(k):
                sn = self.nodes[sub]
                if sn.kind == "index" and self.indices[sn.ref].extent == t.shape[d]:
                    continue  # the dim itself: never outside
                poly = self.subscript_poly(self.read_position(sub))
                if poly is None:
                    raise kq.Unsupported(
                        "a read of padded input %s whose subscript %d is not index "
                        "arithmetic of constant steps is not translated" % (t.name, d + 1))
                low, high = self.span(poly, t.name)
                front[d] = max(front[d], -low)
                size = self.extent(t.shape[d])
                if spread[d] > 1:
                    size = "(%s - 1) * %d + 1" % (size, spread[d])
                behind[d].append("%s + 1 - %s" % (high, size))
            self.pads[k] = (front, ["max(0, %s)" % ", ".join(b) if b else None for b in behind])
            self.spread[k] = spread

    def subscripts_of(self, k):
        """(dim, subscript node) of every read of tensor k."""
        for n in self.nodes:
            if n.kind == "access" and n.ref == k:
                yield from enumerate(n.args)

    def read_position(self, sub):
        """The subscript a read moves along: e for (e) / S, else the subscript itself."""
        n = self.nodes[sub]
        return n.args[0] if n.kind == "apply" and n.op == "div" else sub

    def spreads(self, k):
        """Per dim of padded input k, the S of its reads (e) / S (1 where it has none); declined
        where reads of one dim divide by different S, or only some divide."""
        t = self.tensors[k]
        seen = [set() for _ in t.shape]
        for d, sub in self.subscripts_of(k):
            sn = self.nodes[sub]
            seen[d].add(int(self.nodes[sn.args[1]].value)
                        if sn.kind == "apply" and sn.op == "div" else 1)
        if any(len(x) > 1 for x in seen):
            raise kq.Unsupported("reads of padded input %s that divide one dim by different "
                                 "amounts are not translated" % t.name)
        return [next(iter(x)) if x else 1 for x in seen]

    def span(self, poly, name):
        """A subscript's lowest value (an int) and its highest (Python text over the dims)."""
        low, high = 0, []
        for (v, dims), c in poly.items():
            factor = " * ".join([str(c)] + [self.dim(d) for d in dims])
            if v is None:
                if dims and c < 0:
                    raise kq.Unsupported("a read of padded input %s offset by minus a dim is not "
                                         "translated" % name)
                low += 0 if dims else c
                high.append(factor)
                continue
            extent = self.indices[v].extent
            if c > 0:
                high.append("%s * (%s - 1)" % (factor, self.extent(extent)))
            elif dims or isinstance(extent, str):
                raise kq.Unsupported("a read of padded input %s whose subscript runs down over a "
                                     "dim's length is not translated" % name)
            else:
                low += c * (int(extent) - 1)
        return low, " + ".join(high) or "0"

    # ---- reductions and scans

    def reduce(self, n):
        if n.reduction == "sum":
            product = self.contraction(n)
            if product is not None:
                return product
        body = self.value(n.args[0])
        integer = body.kind in _INTEGER_KINDS or (body.kind == "const" and body.integral)
        b = self.expanded(body, tuple(body.axes) + tuple(
            a for a in n.over if a not in body.axes), integer)
        over = [b.axes.index(a) for a in n.over]
        rest = tuple(a for a in b.axes if a not in n.over)
        atom = b.atom()
        r = n.reduction
        if r in ("argmax", "argmin"):
            if len(over) > 1 or len(rest) == 0:
                # The reduced axes last, the first listed outermost, flattened: kq's row-major
                # position within them.
                order = [k for k in range(len(b.axes)) if k not in over] + over
                if order != list(range(len(b.axes))):
                    atom = "%s.permute(%s)" % (atom, ", ".join(str(k) for k in order))
                if not rest:
                    return _Val("%s.%s()" % (atom, r), (), "long")
                atom = "%s.flatten(%d)" % (atom, len(rest))
                return _Val("%s.%s(dim=-1)" % (atom, r), rest, "long")
            return _Val("%s.%s(dim=%d)" % (atom, r, over[0]), rest, "long")
        kind = "long" if integer else "float"
        if r == "prod":  # torch.prod takes one dim: the last first, so the others keep theirs
            for k in sorted(over, reverse=True):
                atom = "%s.prod(dim=%d)" % (atom, k)
            return _Val(atom, rest, kind)
        fn = _REDUCE[r]
        if not rest and fn in ("sum", "amax", "amin"):
            return _Val("%s.%s()" % (atom, fn), (), kind)
        dims = str(over[0]) if len(over) == 1 else "(%s)" % ", ".join(str(k) for k in over)
        return _Val("%s.%s(dim=%s)" % (atom, fn, dims), rest, kind,
                    call=("torch." + fn, [b.code, "dim=" + dims]))

    def contraction(self, n):
        """sum(k, a[..] * b[..]) of two float tensors read as they are stored, each with an axis
        the other lacks (a matrix product: a[m, k], b[k, n]): torch.einsum, which torch runs as
        a (batched) matrix product, where the broadcast product would first make a tensor of
        M x N x K elements. None for any other sum: a product no larger than its operands
        (x[m, n] * x[m, n], a[m, k] * v[k]) stays the multiply and sum a user writes, which
        torch.compile fuses into one reduction."""
        body = self.nodes[n.args[0]]
        if body.kind != "apply" or body.op != "mul" or \
                any(self.nodes[x].kind != "access" for x in body.args):
            return None
        a, b = (self.value(x) for x in body.args)
        if a.kind != "float" or b.kind != "float" or not set(n.over) <= set(a.axes) | set(b.axes):
            return None
        if not set(a.axes) - set(b.axes) or not set(b.axes) - set(a.axes):
            return None
        axes = self.result_axes([a, b])
        rest = tuple(x for x in axes if x not in n.over)
        # The statement's own index names where each is one letter (einsum's alphabet).
        names = [self.indices[x].name for x in axes]
        if not all(len(c) == 1 and c.isalpha() for c in names) or len(set(names)) < len(names):
            names = [chr(ord("a") + k) for k in range(len(axes))]
        letter = dict(zip(axes, names))
        subscripts = "%s,%s->%s" % tuple("".join(letter[x] for x in v)
                                         for v in (a.axes, b.axes, rest))
        narrow = {self.nodes[x].ref for x in body.args} <= self.narrow
        if narrow and self.mm_f32:
            return _Val(self._mm_f32(a, b, n.over[0], rest), rest, "float")
        # Narrow here is a bare product into an output of the operands' type: einsum's 16-bit
        # result is already that output's rounding, copied as it is.
        product = "torch.einsum(%r, %s, %s)" % (subscripts, a.code, b.code)
        return _Val(product, rest, "float", call=self._mm_call(a, b, n.over, rest))

    @staticmethod
    def _mm_call(a, b, over, rest):
        """torch.mm (or bmm, one batch index in front) of a product over one index, the
        operands transposed (views) to (m, k) and (k, n): what einsum runs, in a form with out=
        (eager's write into the output). None for other products."""
        if len(over) != 1 or len(a.axes) != len(b.axes) or len(a.axes) != len(rest) or \
                len(rest) not in (2, 3):
            return None
        k = over[0]
        batch = rest[:-2]
        if a.axes[:len(batch)] != batch or b.axes[:len(batch)] != batch:
            return None
        m, n = rest[-2:]
        codes = []
        for v, pair in ((a, (m, k)), (b, (k, n))):
            own = v.axes[len(batch):]
            if own == pair:
                codes.append(v.code)
            elif own == pair[::-1]:
                codes.append("%s.transpose(-2, -1)" % v.atom())
            else:
                return None
        return ("torch.bmm" if batch else "torch.mm"), codes

    def _mm_f32(self, a, b, k, rest):
        """torch.mm of 2-d operands, each transposed (a view) to (m, k) and (k, n), into DT."""
        a_code = a.code if a.axes[-1] == k else "%s.t()" % a.atom()
        b_code = b.code if b.axes[0] == k else "%s.t()" % b.atom()
        product = "torch.mm(%s, %s, out_dtype=DT)" % (a_code, b_code)
        m = next(x for x in a.axes if x != k)
        return product if rest[0] == m else product + ".t()"

    def scan(self, n):
        body = self.value(n.args[0])
        v = n.over[0]
        integer = body.kind in _INTEGER_KINDS or (body.kind == "const" and body.integral)
        b = self.expanded(body, tuple(body.axes) + ((v,) if v not in body.axes else ()), integer)
        k = b.axes.index(v)
        atom = b.atom()
        if n.reverse:
            atom = "%s.flip(%d)" % (atom, k)
        if n.exclusive:
            self.uses_shift = True
            fill = _IDENTITY[n.scan] if integer else _IDENTITY[n.scan] + ".0"
            atom = "shift(%s, %d, %s)" % (atom, k, fill)
        atom = "%s.%s(dim=%d)" % (atom, n.scan, k)
        if n.reverse:
            atom = "%s.flip(%d)" % (atom, k)
        return _Val(atom, b.axes, "long" if integer else "float")

    # ---- statements

    def statement(self, s):
        self.lhs = tuple(s.lhs)
        t = self.tensors[s.tensor]
        v = self.value(s.root)
        self.lines.append("# " + s.text.strip())
        if v.kind == "index":
            v = self.materialize(v, True)
        if t.role == "output":
            out = self.param_names[s.tensor]
            if v.kind == "const":
                code = v.code if v.number is None else _literal(v.number, v.integral)
            else:
                name = self.local.get(s.tensor)
                if name is not None:
                    self.lines.append("%s = %s" % (name, v.code))
                    v = _Val(name, v.axes, v.kind)
                code, _ = self.aligned(v.code, v.prec, v.axes, self.lhs)
            if self.writes_into(t, s.tensor, v):
                fn, operands = v.call
                self.lines.append("%s(%s, out=%s)" % (fn, ", ".join(operands), out))
            elif not t.shape:
                # A scalar: Inductor's CPU code (torch 2.11) drops copy_ and fill_ into a 0-d
                # input; an assignment to all of it is kept, and rounds as copy_ does.
                self.lines.append("%s[...] = %s" % (out, code))
            elif v.kind == "const":
                self.lines.append("%s.fill_(%s)" % (out, code))
            else:
                self.lines.append("%s.copy_(%s)" % (out, code))
        if t.role == "output" and s.tensor not in self.local:
            return
        positions = [self.lhs.index(a) for a in v.axes]
        if v.kind == "const":
            self.stored[s.tensor] = _Stored(v.code, (), "const", v.number, v.integral, v.prec)
            return
        if t.role == "temporary":
            name = self.local[s.tensor]
            self.lines.append("%s = %s" % (name, v.code))
        else:
            name = self.local[s.tensor]
        self.stored[s.tensor] = _Stored(name, positions, v.kind)

    def writes_into(self, t, k, v):
        """Whether output t (tensor k) takes value v through out=: eager's last operation
        writing it in place of a temporary and a copy_. Only where nothing is left for copy_
        to do: a float value over the statement's axes in their order, the output's dtype the
        compute dtype (no rounding), not read by a later statement."""
        return (self.into_outputs and v.call is not None and v.kind == "float"
                and tuple(v.axes) == self.lhs and t.dtype == self.spec.compute
                and k not in self.local)

    def source(self):
        library = _torch_library.call(self.spec, [self.param_names[k] for k in self.inputs],
                                      [self.param_names[k] for k in self.outputs],
                                      self.into_outputs, self.device_name)
        if library is not None:  # torch's one function for the whole program
            self.lines = ["# %s" % s.text.strip() for s in self.p.statements] + [library]
        else:
            for s in self.p.statements:
                self.statement(s)
        head = []
        # The dims: read from the first input (else output) each sizes; `M, N = x.shape` where one
        # tensor gives them all in order.
        by_tensor = {}
        for d in sorted(self.dims_used, key=lambda d: self.dim_index[d]):
            by_tensor.setdefault(self.dim_source[d][0], []).append(d)
        for k, ds in by_tensor.items():
            shape = self.tensors[k].shape
            param = self.param_names[k]
            if len(shape) > 1 and list(shape) == ds:
                head.append("%s = %s.shape" % (", ".join(self.dim_names[self.dim_index[d]]
                                                         for d in ds), param))
            else:
                for d in ds:
                    head.append("%s = %s.shape[%d]" % (self.dim_names[self.dim_index[d]], param,
                                                       self.dim_source[d][1]))
        for k in sorted(self.consts_used):
            head.append("%s = %s" % (self.const_names[k], _literal(self.p.params[k].value)))
        widened = [self.param_names[k] for k in self.inputs
                   if self.stored[k].kind == "float" and self.tensors[k].dtype != self.spec.compute
                   and k not in self.narrow and library is None]
        if len(widened) == 1:
            head.append("%s = %s.to(DT)" % (widened[0], widened[0]))
        elif widened:
            head.append("%s = %s" % (", ".join(widened), ", ".join("%s.to(DT)" % w
                                                                    for w in widened)))
        # A padded input as one tensor holding its pad all round (F.pad's list from the last dim),
        # first spread out along the dims read through (e) / S.
        for k, (front, behind) in sorted(self.pads.items()):
            for d, by in enumerate(self.spread.get(k, ())):
                if by > 1:
                    self.uses_spread = True
                    name = self.param_names[k]
                    head.append("%s = spread(%s, %d, %d, %s)" % (
                        name, name, d, by, _literal(self.tensors[k].pad)))
            first = next((d for d, b in enumerate(behind) if b), len(behind))
            widths = [x for d in reversed(range(first, len(front)))
                      for x in (str(front[d]), behind[d] or "0")]
            if not widths:
                continue
            name = self.param_names[k]
            head.append("%s = F.pad(%s, (%s), value=%s)" % (name, name, ", ".join(widths),
                                                            _literal(self.tensors[k].pad)))
        args = ", ".join(self.param_names[k] for k in self.params)
        text = "def %s(%s):\n" % (self.name, args)
        text += "".join("    %s\n" % line for line in head + self.lines)
        return (_SHIFT if self.uses_shift else "") + (_SPREAD if self.uses_spread else "") + text


def source(spec, name="shaped", device="cpu", into_outputs=False):
    """The function `name(inputs..., outputs...)` computing a format-2 spec's statements in
    PyTorch on `device`, as Python source (torch, F, math and DT, the compute dtype, in its
    scope). `into_outputs`: an output's last operation writes it through out= where it can
    (eager), else each output is written by copy_ (what torch.compile folds into its kernel).
    Raises kq.Unsupported with the reason where it cannot."""
    if getattr(spec, "program", None) is None:
        raise kq.Unsupported("not a format-2 (shaped) spec")
    return _Translator(spec, name, device, into_outputs).source()


_MM_OUT_DTYPE = []


def _mm_out_dtype():
    """Whether this torch's CUDA torch.mm takes out_dtype (a 16-bit product returned in f32)."""
    if not _MM_OUT_DTYPE:
        try:
            import torch

            x = torch.ones(2, 2, dtype=torch.bfloat16, device="cuda")
            _MM_OUT_DTYPE.append(torch.mm(x, x, out_dtype=torch.float32).dtype == torch.float32)
        except (ImportError, TypeError, RuntimeError, AssertionError):
            _MM_OUT_DTYPE.append(False)
    return _MM_OUT_DTYPE[0]


def define(text, name, spec):
    """The function `name` that `text` (source()'s) defines, with its scope."""
    import torch
    import torch.nn.functional as F

    scope = {"torch": torch, "F": F, "math": math, "DT": kq.torch_dtype(spec.compute)}
    exec(compile(text, "<kq %s: %s>" % (name, spec.op), "exec"), scope)
    return scope[name]


def example_tensors(spec, device, extent=2):
    """Zero tensors for every input and output, each dim `extent` long: what a call that only
    shows whether torch has a kernel for each operation runs on (zeros are valid indices)."""
    import torch

    def sizes(t):
        return [extent if isinstance(e, str) else int(e) for e in t.shape]

    p = spec.program
    return [torch.zeros(sizes(t), dtype=kq.torch_dtype(t.dtype), device=device)
            for role in ("input", "output") for t in p.tensors if t.role == role]
