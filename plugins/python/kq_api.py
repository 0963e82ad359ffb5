"""kq: the API of arms written in Python, given by kq's python plugin (plugins/python).

An arm is a function decorated with kq.arm, or a subclass of kq.Arm, in a .py file of
plugins/python/arms/, of a folder named in KQ_PYTHON_ARMS or of `--python-arms DIR`. A function
is enough when the arm is its kernel:

    import kq

    @kq.arm(name="my_relu", device="cuda", family="triton", computes="relu(x + residual)")
    def my_relu(inputs, outputs):    # run(): tensors over kq's own buffers, no copy
        ...

`computes` is the formula the arm implements, in the specs' expression language; a spec is
supported when its semantics are that expression tree (structurally: spacing, parentheses and
input names aside). The other keywords are in kq.arm's documentation. A class says the same and
more, each method overridable:

    import kq

    class MyArm(kq.Arm):
        name, family, device, version = "my_arm", "triton", "cuda", "1"

        def supports(self, spec):        # None, or why not (a string)
            if not kq.matches(spec, "relu(x + residual)"):
                return "computes relu(x + residual) only"
            return kq.missing("torch", "triton")

        def prepare(self, problem):      # problem.spec, .inputs, .outputs, .stream
            pass                         # compile here, on scratch tensors (kq.scratch_like)

        def run(self, inputs, outputs):  # tensors over kq's own buffers, no copy
            ...                          # enqueue the work on torch's current stream

Tensors (`tensors`, a class attribute or a keyword of kq.arm):
    "torch"  torch tensors (torch.from_dlpack), on the arm's device;
    "numpy"  numpy arrays, CPU arms only; inputs are read-only; none for bf16 (numpy has no
             bfloat16: kq refuses the call, so a numpy arm declines bf16 specs in supports());
    "kq"     kq.Tensor, which exposes __dlpack__, __dlpack_device__ and, on CUDA,
             __cuda_array_interface__ (CuPy, numba, cuda-python), or __array_interface__ on the
             CPU; data_ptr, shape, strides (in elements), dtype ("f32", "f64", "f16", "bf16",
             and in format-2 specs "i32", "i64", "bool") and device as attributes. DLPack gives
             f16 as kDLFloat, bf16 as kDLBfloat, i32 and i64 as kDLInt, bool as kDLBool; the
             array interfaces give f16 as "<f2", bool as "|b1" and are absent (AttributeError)
             for bf16;
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

import difflib as _difflib
import importlib.util as _importlib_util
import re as _re
import types as _types


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
    """The torch dtype of a kq dtype: a name ("f32", "f64", "f16", "bf16", "i32", "i64", "bool",
    e.g. spec.compute) or a spec (its dtype)."""
    import torch

    name = dtype if isinstance(dtype, str) else dtype.dtype
    return {"f32": torch.float32, "f64": torch.float64, "f16": torch.float16,
            "bf16": torch.bfloat16, "i32": torch.int32, "i64": torch.int64,
            "bool": torch.bool}[name]


def matches(spec, expected, inputs=None):
    """Whether the spec's semantics are `expected`: an expression ("relu(x + residual)"), compared
    with the spec's as a tree (kq.parse; `inputs` as there), with as many inputs as the spec; or
    a list of node ops in post-order (["input", "input", "add", "relu"]), inputs not compared."""
    if isinstance(expected, str):
        nodes = parse(expected, inputs)
        count = len(inputs) if inputs is not None else _input_count(nodes)
        return len(spec.inputs) == count and _same_tree(spec.semantics_ast, nodes)
    return [n.op for n in spec.semantics_ast] == list(expected)


def computes(spec, canonical):
    """Whether a format-2 spec's statements are the computation whose canonical form is
    `canonical` (what `kq check-spec SPEC` prints under "canonical form": names by place, every
    operation a call), blanks aside. The structural match of shaped arms: never the op's name."""
    if getattr(spec, "program", None) is None:
        return False
    return " ".join(spec.program.canonical.split()) == " ".join(canonical.split())


class ExpressionError(ValueError):
    """A malformed expression given to kq.parse; `column` is where (1 for its first character)."""

    def __init__(self, column, message):
        super().__init__("column %d: %s" % (column, message))
        self.column = column


# The specs' expression language, as kq's host parses it (core/expr/parser.hpp): the same
# grammar, precedence and name lookup, so that an arm's formula and a spec's give the same tree.
_FUNCTIONS = {"relu": 1, "abs": 1, "exp": 1, "log": 1, "sqrt": 1, "tanh": 1, "sigmoid": 1,
              "erf": 1, "gelu": 1, "silu": 1, "max": 2, "min": 2, "select": 3, "clamp": 3}
_COMPARISONS = {"<": "lt", "<=": "le", ">": "gt", ">=": "ge", "==": "eq", "!=": "ne"}
_TOKEN = _re.compile(r"""
    (?P<number>(?:[0-9]|\.[0-9])(?:[A-Za-z0-9_.]|(?<=[eE])[-+])*)
  | (?P<name>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<symbol><=|>=|==|!=|[-+*/(),<>])""", _re.X)
_NUMBER = _re.compile(r"(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?")


def _tokens(text):
    """(kind, spelling, position) of each token, then ("end", "", len(text))."""
    pos = 0
    while True:
        while pos < len(text) and text[pos] in " \t\n\r\f\v":
            pos += 1
        if pos == len(text):
            yield ("end", "", pos)
            return
        m = _TOKEN.match(text, pos)
        if m is None:
            hint = {"=": " (equality is written '==')", "!": " (inequality is written '!=')"}
            raise ExpressionError(pos + 1, "unexpected character %r%s"
                                  % (text[pos], hint.get(text[pos], "")))
        yield (m.lastgroup, m.group(), pos)
        pos = m.end()


class _Parser:
    """Recursive descent, one method per rule; each emits its node after its operands'."""

    def __init__(self, text, inputs):
        self.tokens = _tokens(text)
        self.inputs = list(inputs) if inputs is not None else None
        self.named = []  # the input names in order of first use, when `inputs` is None
        self.nodes = []
        self.advance()

    def advance(self):
        self.kind, self.spelled, self.pos = next(self.tokens)

    def fail(self, message, pos=None):
        raise ExpressionError((self.pos if pos is None else pos) + 1, message)

    def found(self):
        return "the end of the expression" if self.kind == "end" else "%r" % self.spelled

    def emit(self, op, *args, value=0.0, input=-1):
        self.nodes.append(_types.SimpleNamespace(op=op, value=value, input=input, args=list(args)))
        return len(self.nodes) - 1

    def expression(self):
        if self.kind == "end":
            self.fail("empty expression")
        self.compare()
        if self.kind != "end":
            self.fail("unexpected %s after a complete expression" % self.found())
        return self.nodes

    def compare(self):
        lhs = self.additive()
        op = _COMPARISONS.get(self.spelled)
        if op is None:
            return lhs
        self.advance()
        rhs = self.additive()
        if self.spelled in _COMPARISONS:
            self.fail("comparisons do not chain: parenthesise one side, e.g. (a < b) < c")
        return self.emit(op, lhs, rhs)

    def additive(self):
        lhs = self.term()
        while self.spelled in ("+", "-"):
            op = "add" if self.spelled == "+" else "sub"
            self.advance()
            lhs = self.emit(op, lhs, self.term())
        return lhs

    def term(self):
        lhs = self.unary()
        while self.spelled in ("*", "/"):
            op = "mul" if self.spelled == "*" else "div"
            self.advance()
            lhs = self.emit(op, lhs, self.unary())
        return lhs

    def unary(self):
        if self.spelled == "-":  # always neg: "-1" is neg(1)
            self.advance()
            return self.emit("neg", self.unary())
        return self.primary()

    def primary(self):
        kind, spelled, pos = self.kind, self.spelled, self.pos
        if kind == "number":
            if not _NUMBER.fullmatch(spelled):
                self.fail("malformed number %r" % spelled)
            value = float(spelled)
            underflow = value == 0 and _re.search("[1-9]", _re.split("[eE]", spelled)[0])
            if value == float("inf") or underflow:
                self.fail("number %r is outside the float64 range (write inf for infinity)"
                          % spelled)
            self.advance()
            return self.emit("constant", value=value)
        if kind == "name":
            self.advance()
            return self.name(spelled, pos)
        if spelled == "(":
            self.advance()
            inner = self.compare()
            if self.spelled != ")":
                self.fail("expected ')' to close '(' at column %d but found %s"
                          % (pos + 1, self.found()))
            self.advance()
            return inner
        self.fail("expected a number, a name or '(' but found %s" % self.found())

    def name(self, name, pos):
        called = self.spelled == "("
        if name in _FUNCTIONS:
            if not called:
                self.fail("'%s' is a function: call it as %s(...) with %s"
                          % (name, name, _arguments(_FUNCTIONS[name])), pos)
            return self.call(name, pos)
        if called:
            self.fail("'%s' is not a function" % name, pos)
        if name in ("inf", "nan"):
            return self.emit("constant", value=float(name))
        if self.inputs is None:
            if name not in self.named:
                self.named.append(name)
            return self.emit("input", input=self.named.index(name))
        if name not in self.inputs:
            self.fail("unknown name '%s': it is neither an input (inputs: %s) nor a function"
                      % (name, ", ".join(self.inputs)), pos)
        return self.emit("input", input=self.inputs.index(name))

    def call(self, name, pos):
        self.advance()  # '('
        args = []
        if self.spelled != ")":
            while True:
                args.append(self.compare())
                if self.spelled == ")":
                    break
                if self.spelled != ",":
                    self.fail("expected ',' or ')' after argument %d of %s but found %s"
                              % (len(args), name, self.found()))
                self.advance()
        self.advance()  # ')'
        if len(args) != _FUNCTIONS[name]:
            self.fail("%s takes %s, got %d" % (name, _arguments(_FUNCTIONS[name]), len(args)), pos)
        return self.emit(name, *args)


def _arguments(n):
    return "%d argument%s" % (n, "" if n == 1 else "s")


def parse(text, inputs=None):
    """An expression in the specs' language as the nodes kq gives in spec.semantics_ast: in
    post-order, each with op, value (a constant's), input (an input's position) and args (its
    operands' indices). `inputs` names the inputs by position; without it, positions follow the
    names' first appearance ("silu(x) * y": x is 0, y is 1). Raises kq.ExpressionError."""
    if not isinstance(text, str):
        raise TypeError("kq.parse takes the expression as a string, not %s" % type(text).__name__)
    return _Parser(text, inputs).expression()


def _input_count(nodes):
    return max((n.input + 1 for n in nodes if n.op == "input"), default=0)


def _same_tree(got, want):
    """Whether the node lists are one tree: the same op at each place from the root down, the
    same input positions, equal constants (nan equal to nan); and every node of `got` in it."""
    seen = set()

    def same(i, j):
        if not 0 <= i < len(got):
            return False
        seen.add(i)
        g, w = got[i], want[j]
        if g.op != w.op:
            return False
        if g.op == "constant":
            return g.value == w.value or (g.value != g.value and w.value != w.value)
        if g.op == "input":
            return g.input == w.input
        # Operands precede their user in a well-formed list; anything else is not ours to accept.
        return len(g.args) == len(w.args) and all(
            a < i and same(a, b) for a, b in zip(g.args, w.args))

    return bool(got) and bool(want) and same(len(got) - 1, len(want) - 1) and len(seen) == len(got)


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


class ArmDefinitionError(ValueError):
    """A kq.arm(...) that cannot define an arm: an unknown keyword, a bad value. Raised where the
    decorator is written, so that the file's load error names its line."""


_DTYPES = ("f32", "f64", "f16", "bf16")
_ARM_KEYWORDS = ("name", "device", "family", "version", "computes", "inputs", "dtypes",
                 "contiguous_only", "tensors", "requires", "prepare", "supports", "artifacts",
                 "checks_contract", "expected_rejection")


def arm(fn=None, **options):
    """Makes a function an arm: run(inputs, outputs), the function itself, which stays callable
    (the arm is its attribute kq_arm). As @kq.arm(...) with these keywords, all optional:

      name                the arm's name (default: the function's)
      device              "cpu" (default) or "cuda"
      family, version     as kq.Arm's ("python", "1")
      computes            the formula it implements, e.g. "relu(x + residual)": a spec whose
                          semantics are another expression tree is declined, with the reason.
                          Its input names are positions: in `inputs` order, else in order of
                          first appearance; the spec must have as many inputs
      inputs              the input names of `computes` in order, e.g. ("x", "y") for "y * x"
      dtypes              the spec dtypes it takes ("f32", "f64", "f16", "bf16"), each computed
                          as kq computes it by default (f32 and f64 in themselves, f16 and bf16
                          in f32): a spec whose `compute` says otherwise is declined
      contiguous_only     True: a flat kernel, declining the specs that admit strided views
      tensors             "auto" (default), "torch", "numpy" or "kq", as kq.Arm's; a numpy arm
                          declines bf16 (numpy has none)
      requires            modules it needs, e.g. ("torch", "triton"): where one is missing (or
                          torch cannot reach the device) every spec is declined with why
      prepare             prepare(problem), called outside timed regions, as kq.Arm.prepare
      supports            supports(spec) -> None or why not, after the checks above
      artifacts           artifacts() -> [(kind, filename, text or bytes)], as kq.Arm's
      checks_contract, expected_rejection   for a known-broken candidate, as kq.Arm's

    A keyword that is not one of these, or a value that cannot be right, raises
    kq.ArmDefinitionError where the decorator is written."""
    definition = _arm_definition(options)
    if fn is None:
        return lambda f: _make_arm(f, definition)
    return _make_arm(fn, definition)


def _arm_definition(options):
    """The decorator's keywords, checked and with their defaults; raises ArmDefinitionError."""
    label = "kq.arm(%s)" % ("name=%r" % options["name"] if "name" in options else "")
    for key in options:
        if key not in _ARM_KEYWORDS:
            close = _difflib.get_close_matches(key, _ARM_KEYWORDS, 1)
            hint = " (did you mean %r?)" % close[0] if close else ""
            raise ArmDefinitionError("%s: unknown keyword %r%s; the keywords are %s"
                                     % (label, key, hint, ", ".join(_ARM_KEYWORDS)))
    d = dict(name=None, device="cpu", family="python", version="1", computes=None, inputs=None,
             dtypes=None, contiguous_only=False, tensors="auto", requires=(), prepare=None,
             supports=None, artifacts=None, checks_contract=True, expected_rejection="")
    d.update(options)

    def bad(key, why):
        raise ArmDefinitionError("%s: %s=%r: %s" % (label, key, d[key], why))

    if d["name"] is not None and (not isinstance(d["name"], str) or not d["name"]):
        bad("name", "a name is a non-empty string")
    if d["device"] not in ("cpu", "cuda"):
        bad("device", 'the device is "cpu" or "cuda"')
    for key in ("family", "version", "expected_rejection"):
        if not isinstance(d[key], str):
            bad(key, "a string")
    if d["tensors"] not in ("auto", "torch", "numpy", "kq"):
        bad("tensors", '"auto", "torch", "numpy" or "kq"')
    if d["tensors"] == "numpy" and d["device"] != "cpu":
        bad("tensors", "numpy arrays are for CPU arms only")
    for key in ("prepare", "supports", "artifacts"):
        if d[key] is not None and not callable(d[key]):
            bad(key, "a function, or None")
    for key in ("contiguous_only", "checks_contract"):
        if not isinstance(d[key], bool):
            bad(key, "True or False")
    d["dtypes"] = _names(d, "dtypes", bad, _DTYPES)
    d["requires"] = _names(d, "requires", bad) or ()
    d["inputs"] = _names(d, "inputs", bad)
    d["expression"] = _computes(d, bad)
    return d


def _names(d, key, bad, allowed=None):
    """A keyword that takes names: a string or a sequence of them (None stays None)."""
    value = d[key]
    if value is None:
        return None
    names = (value,) if isinstance(value, str) else value
    try:
        names = tuple(names)
    except TypeError:
        bad(key, "a name or a sequence of names")
    for n in names:
        if not isinstance(n, str):
            bad(key, "%r is not a string" % (n,))
        if allowed and n not in allowed:
            bad(key, "%r is not one of %s" % (n, ", ".join(allowed)))
    if len(set(names)) != len(names):
        bad(key, "a name given twice")
    return names


def _computes(d, bad):
    """`computes` parsed (None when not given), with `inputs` naming its inputs."""
    if d["computes"] is None:
        if d["inputs"] is not None:
            bad("inputs", "names the inputs of `computes`, which is not given")
        return None
    if not isinstance(d["computes"], str):
        bad("computes", "an expression, as a string")
    try:
        nodes = parse(d["computes"], d["inputs"])
    except ExpressionError as e:
        bad("computes", str(e))
    # A spec names every input in its semantics: an input `computes` leaves out matches none.
    used = {n.input for n in nodes if n.op == "input"}
    for k, name in enumerate(d["inputs"] or ()):
        if k not in used:
            bad("inputs", "%r does not appear in computes=%r" % (name, d["computes"]))
    return nodes


def _make_arm(fn, definition):
    if not callable(fn) or isinstance(fn, type):  # a class is an arm by deriving from kq.Arm
        raise ArmDefinitionError("kq.arm decorates a function run(inputs, outputs), not %r" % (fn,))
    if isinstance(getattr(fn, "__dict__", {}).get("kq_arm"), _FunctionArm):
        raise ArmDefinitionError("%s is already the arm %r: decorate a function once"
                                 % (getattr(fn, "__name__", fn), fn.kq_arm.name))
    made = _FunctionArm(fn, definition)
    try:
        fn.kq_arm = made
    except AttributeError:
        raise ArmDefinitionError("kq.arm decorates a Python function (a def), not %r" % (fn,)) \
            from None
    return fn


class _FunctionArm(Arm):
    """An arm made by kq.arm: run() is the function; supports() checks what the decorator says."""

    def __init__(self, fn, d):
        self.fn = fn
        self.module = getattr(fn, "__module__", None)
        self.name = d["name"] or getattr(fn, "__name__", None)
        if not self.name:
            raise ArmDefinitionError("kq.arm: %r has no __name__: give name=" % (fn,))
        self.device, self.family, self.version = d["device"], d["family"], d["version"]
        self.tensors, self.checks_contract = d["tensors"], d["checks_contract"]
        self.expected_rejection = d["expected_rejection"]
        self.computes, self.expression = d["computes"], d["expression"]
        named = d["inputs"]
        self.input_count = len(named) if named is not None else _input_count(d["expression"] or [])
        self.dtypes, self.contiguous_only = d["dtypes"], d["contiguous_only"]
        self.requires = d["requires"]
        self._prepare, self._supports, self._artifacts = d["prepare"], d["supports"], d["artifacts"]

    def supports(self, spec):
        why = (self._formula_missing(spec) or self._dtype_missing(spec)
               or self._layout_missing(spec) or _requires_missing(self.requires, self.device))
        if why:
            return why
        return self._supports(spec) if self._supports else None

    def _formula_missing(self, spec):
        """The tree, never the text: spec.semantics only says, in the reason, what the spec is."""
        if self.expression is None:
            return None
        if len(spec.inputs) == self.input_count and _same_tree(spec.semantics_ast, self.expression):
            return None
        program = getattr(spec, "program", None)
        if program is not None:  # format 2: indexed statements, no one expression
            return "computes %s, and the spec's semantics are statements: %s" % (
                self.computes, "; ".join(s.text.strip() for s in program.statements))
        return "computes %s, and the spec's semantics are %s" % (self.computes, spec.semantics)

    def _layout_missing(self, spec):
        if self.contiguous_only and not spec.layouts.contiguous_only:
            return "contiguous views only, and the spec admits strided ones"
        return None

    def _dtype_missing(self, spec):
        if self.tensors == "numpy" and spec.dtype == "bf16":
            return "numpy has no bfloat16"
        if self.dtypes is None:
            return None
        if spec.dtype not in self.dtypes:
            return "dtype %s: this arm takes %s" % (spec.dtype, ", ".join(self.dtypes))
        default = "f32" if spec.dtype in ("f16", "bf16") else spec.dtype
        if spec.compute != default:
            return "%s computed in %s: this arm computes %s in %s" % (
                spec.dtype, spec.compute, spec.dtype, default)
        return None

    def prepare(self, problem):
        if self._prepare:
            self._prepare(problem)

    def run(self, inputs, outputs):
        self.fn(inputs, outputs)

    def artifacts(self):
        return list(self._artifacts()) if self._artifacts else []


def _requires_missing(modules, device):
    """Why one of these modules cannot serve here; torch also needs to reach `device`."""
    for m in modules:
        why = torch_missing(device) if m == "torch" else missing(m)
        if why:
            return why
    return None


# What follows is the plugin's; arms do not call it.


def _arms_in(module):
    """The arms a file defines, in the order it defines them: its kq.Arm subclasses that have a
    name (one without is a base of the others), each made once, and its functions decorated with
    kq.arm. Those it imports from another module are that module's."""
    found = []
    for value in list(vars(module).values()):
        if isinstance(value, type):
            ours = issubclass(value, Arm) and value.__module__ == module.__name__
            if ours and value.name is not None:
                found.append(value())
            continue
        try:
            made = vars(value).get("kq_arm")
        except (TypeError, AttributeError):  # no __dict__ (or not a dict): not a function
            continue
        if isinstance(made, _FunctionArm) and made.module == module.__name__ and made not in found:
            found.append(made)
    return found


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


def _torch_bool(t):
    """A bool kq.Tensor as a torch tensor through its array interface, the same memory."""
    import warnings

    import torch

    if t.device == "cuda":
        return torch.as_tensor(t, device="cuda:%d" % t.device_id)
    import numpy

    with warnings.catch_warnings():  # an input's array is read-only; kq never lets it be written
        warnings.simplefilter("ignore", UserWarning)
        return torch.from_numpy(numpy.asarray(t))


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

            try:
                return torch.from_dlpack(t)
            except RuntimeError:
                if t.dtype != "bool":
                    raise
                return _torch_bool(t)  # a torch older than DLPack's kDLBool (2.1)
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
        try:
            return self.call("prepare", (problem,), stream_ptr)
        finally:
            _release_torch_cache()


def _release_torch_cache():
    """Gives the device back what torch's caching allocator keeps unused after a prepare(): the
    scratch an arm built on (kq.scratch_like: a compiled arm's 12.9 GB at KernelBench's 4096 x
    393216 in f32) would stay reserved in the worker while kq sets up the next arms from the
    device's memory. On the H100 two compiled arms' scratch kept 26 GB and the eager arm was
    left out of that size. Only where this process already runs torch on CUDA."""
    torch = _sys.modules.get("torch")
    cuda = getattr(torch, "cuda", None)
    if cuda is not None and cuda.is_initialized():
        cuda.empty_cache()


# ---- tampering: what an arm file changes, at import, in the modules every arm shares ----------
# torch, triton, numpy and kq are shared by every arm of a worker: a file that replaces one of
# their functions (torch.add, a method of torch.Tensor, kq.matches) changes how the others run
# and are timed. Each shared module's callables, and those of the classes it defines, are
# recorded when it is first seen whole: after the outermost import that brought it in returns,
# before the importing code can touch it. After each arm file runs, _tampering() names what
# code from outside the shared packages replaced, added or deleted there, and puts it back.
# Data attributes (config flags) are not compared: the packages change their own while running.
# A thread an arm file starts at import, running code from outside the shared packages, would
# run beside every other arm of the worker: _tampering() names it too (it cannot be put back).
import builtins as _builtins
import functools as _functools
import importlib as _importlib
import os as _os
import sys as _sys
import threading as _threading
import warnings as _warnings

_SHARED = ("torch", "triton", "numpy", "kq")
_MISSING = object()
_watched = {}  # (module name, class name or None) -> {attribute: callable}
_watched_count = [0]  # len(sys.modules) when last looked at
_import_depth = _threading.local()
_threads_seen = set()  # idents of the threads already looked at


def _is_shared(module_name):
    return isinstance(module_name, str) and module_name.split(".", 1)[0] in _SHARED


def _callables(namespace):
    return {k: v for k, v in namespace.items()
            if callable(v) or isinstance(v, (staticmethod, classmethod, property))}


def _record_new():
    """Records the shared modules not seen before (a cheap no-op when none was imported)."""
    if len(_sys.modules) == _watched_count[0]:
        return
    with _warnings.catch_warnings():  # a deprecated attribute may warn when looked at
        _warnings.simplefilter("ignore")
        _record_modules()


def _record_modules():
    _watched_count[0] = len(_sys.modules)
    for name, mod in list(_sys.modules.items()):
        if mod is None or (name, None) in _watched or not _is_shared(name):
            continue
        try:
            namespace = dict(vars(mod))
        except TypeError:
            continue
        _watched[(name, None)] = _callables(namespace)
        for k, v in namespace.items():
            if isinstance(v, type) and getattr(v, "__module__", None) == name:
                _watched[(name, k)] = _callables(dict(vars(v)))


def _outermost(fn):
    """fn (an import function) that records the new shared modules when the outermost call
    returns: a package's own imports of its submodules have run by then, the caller's code not."""
    def wrapped(*args, **kwargs):
        depth = getattr(_import_depth, "n", 0)
        _import_depth.n = depth + 1
        try:
            return fn(*args, **kwargs)
        finally:
            _import_depth.n = depth
            if depth == 0:
                _record_new()
    wrapped.__kq_import__ = fn
    return wrapped


def _watch():
    """Starts watching (once): wraps the import functions, records what is imported now."""
    if not hasattr(_builtins.__import__, "__kq_import__"):
        _builtins.__import__ = _outermost(_builtins.__import__)
        _importlib.import_module = _outermost(_importlib.import_module)
    _record_new()
    _threads_seen.update(t.ident for t in _threading.enumerate())


def _package_dirs():
    dirs = []
    for top in _SHARED:
        f = getattr(_sys.modules.get(top), "__file__", None)
        if f:
            dirs.append(_os.path.dirname(_os.path.abspath(f)) + _os.sep)
    return dirs


def _code_file(obj):
    for o in (obj, getattr(obj, "__func__", None), getattr(obj, "fget", None),
              getattr(obj, "__wrapped__", None)):
        code = getattr(o, "__code__", None)
        if code is not None:
            return code.co_filename
    return None


def _foreign(obj, dirs):
    """Whether obj comes from outside the shared packages: code in a file that is not theirs,
    or a module name that is not theirs (functools.wraps copies the name, not the code); a
    functools.partial by the function it wraps."""
    if isinstance(obj, _functools.partial):
        return _foreign(obj.func, dirs)
    f = _code_file(obj)
    if f is not None and _os.path.isabs(f) and not any(f.startswith(d) for d in dirs):
        return True
    module = getattr(getattr(obj, "__func__", obj), "__module__", None)
    return module is not None and not _is_shared(module)


def _describe(obj):
    code = getattr(obj, "__code__", None)  # its own name: functools.wraps copies the other's
    if code is not None:
        return "%s (%s:%d)" % (code.co_name, code.co_filename, code.co_firstlineno)
    return getattr(obj, "__qualname__", None) or type(obj).__name__


def _tampering():
    """What code from outside the shared packages replaced, added or deleted among the shared
    modules' recorded callables since they were recorded, each put back: a list of lines."""
    with _warnings.catch_warnings():
        _warnings.simplefilter("ignore")
        found = _changes()
    _record_new()
    return found + _new_threads(_package_dirs())


def _new_threads(dirs):
    """The threads started since last looked at, still running, whose code is from outside the
    shared packages (a thread of torch's own, started by a call into torch, is not named)."""
    found = []
    for t in _threading.enumerate():
        if t.ident in _threads_seen:
            continue
        _threads_seen.add(t.ident)
        code = getattr(t, "_target", None)
        if code is None and type(t).run is not _threading.Thread.run:
            code = type(t).run  # a Thread subclass's own run()
        if code is not None and t.is_alive() and _foreign(code, dirs):
            found.append("thread %r, running %s, which runs beside every arm of the worker"
                         % (t.name, _describe(code)))
    return found


def _changes():
    dirs = _package_dirs()
    found = []
    for (name, cls_name), recorded in list(_watched.items()):
        mod = _sys.modules.get(name)
        owner = mod if cls_name is None or mod is None else vars(mod).get(cls_name)
        if owner is None:
            continue
        where = name + "." + (cls_name + "." if cls_name else "")
        namespace = dict(vars(owner))
        for k, old in recorded.items():
            now = namespace.get(k, _MISSING)
            if now is old or (now is not _MISSING and not _foreign(now, dirs)):
                continue
            what = "deleted" if now is _MISSING else "replaced by " + _describe(now)
            found.append(_put_back(owner, k, old, where + k + " " + what))
        for k, now in namespace.items():
            if k not in recorded and (callable(now) or isinstance(now, property)) and not \
                    isinstance(now, (type(_sys), type)) and _foreign(now, dirs):
                found.append(_put_back(owner, k, _MISSING, where + k + " added: " +
                                       _describe(now)))
    return found


def _put_back(owner, key, old, line):
    try:
        if old is _MISSING:
            delattr(owner, key)
        else:
            setattr(owner, key, old)
    except (AttributeError, TypeError) as e:
        return line + " (could not be put back: %s)" % e
    return line
