"""Pointwise activations that torch computes in one kernel, recognised in a format-2 statement by
the structure of its expression alone (never the spec's op name), so that the eager arm runs
what a PyTorch user writes, F.elu and not five kernels of where, exp, sub and mul:

    select(X > 0, X, c * X)                        leaky_relu(X, c)
    select(X > 0, s * X, k * (exp(X) - 1))         elu(X, alpha = k / s, scale = s)   (selu too)
    select(X > t, X, log(1 + exp(X)))              softplus(X, beta = 1, threshold = t)
    clamp(X + 3, 0, 6) / 6                         hardsigmoid(X)
    X * sigmoid(X)                                 silu(X)

X is any expression that holds a tensor (the same one at each place); c, s, k and t are
constants (numbers, params, dims, products of them), s and k possibly absent (1); a condition
may read 0 < X as well. torch's kernels agree with kq's semantics on NaN (kept) and, but for
elu's sign of a zero, at 0 and -0; they are no less accurate (elu's expm1), but for
hardsigmoid in float64 on CUDA (accurate()). Each form's function is torch._C._nn's, which
takes out= (the eager arm's last operation writes the output itself) and which torch.compile
traces as F.elu's own call.
"""
import collections

# fn: the torch._C._nn function; x: the node of the operand; args: its arguments after x, each a
# number or a Ratio of constant nodes.
Match = collections.namedtuple("Match", "fn x args")
# The product of the `over` nodes divided by that of the `under` nodes (1 where empty).
Ratio = collections.namedtuple("Ratio", "over under")

_TENSOR_KINDS = {"access", "index", "reduce", "scan"}

# torch's CUDA hardsigmoid multiplies by 1.0f / 6.0f, a float constant, whatever the dtype: in
# float64 it is 3e-8 off (seen on torch 2.11), so a float64 computation on CUDA keeps the
# statement's own operations there.
_FLOAT_CONSTANT_ON_CUDA = {"hardsigmoid"}


def match(nodes, n):
    """The activation that node n (of `nodes`) computes, or None."""
    if n.kind != "apply":
        return None
    for form in (_leaky_or_elu, _softplus, _hardsigmoid, _silu):
        m = form(nodes, n)
        if m is not None:
            return m
    return None


def accurate(fn, compute, device):
    """Whether torch's `fn` computes in `compute` (a kq dtype name) on `device` as its dtype
    allows."""
    return not (device == "cuda" and compute == "f64" and fn in _FLOAT_CONSTANT_ON_CUDA)


def _leaky_or_elu(nodes, n):
    if n.op != "select":
        return None
    c, a, b = n.args
    x = _positive(nodes, c)
    if x is None:
        return None
    scale, core = _factors(nodes, a)
    if core is None or not _same(nodes, core, x):
        return None
    slope, other = _factors(nodes, b)
    if other is None:
        return None
    if _same(nodes, other, x) and slope and not scale:  # both branches 0 at 0
        return Match("leaky_relu", x, [Ratio(slope, [])])
    o = nodes[other]
    if o.kind == "apply" and o.op == "sub" and _number(nodes, o.args[1], 1.0):
        e = nodes[o.args[0]]
        if e.kind == "apply" and e.op == "exp" and _same(nodes, e.args[0], x):
            return Match("elu", x, [_ratio(nodes, slope, scale), Ratio(scale, []), 1.0])
    return None


def _softplus(nodes, n):
    if n.op != "select":
        return None
    c, a, b = n.args
    cond = nodes[c]
    if cond.kind != "apply" or cond.op != "gt" or not _constant(nodes, cond.args[1]):
        return None
    x = cond.args[0]
    if _constant(nodes, x) or not _same(nodes, a, x):
        return None
    lg = nodes[b]
    if lg.kind != "apply" or lg.op != "log":
        return None
    s = nodes[lg.args[0]]
    if s.kind != "apply" or s.op != "add":
        return None
    for one, e in (s.args, reversed(s.args)):
        en = nodes[e]
        if _number(nodes, one, 1.0) and en.kind == "apply" and en.op == "exp" and \
                _same(nodes, en.args[0], x):
            return Match("softplus", x, [1.0, Ratio([cond.args[1]], [])])
    return None


def _hardsigmoid(nodes, n):
    if n.op != "div" or not _number(nodes, n.args[1], 6.0):
        return None
    cl = nodes[n.args[0]]
    if cl.kind != "apply" or cl.op != "clamp" or not _number(nodes, cl.args[1], 0.0) or \
            not _number(nodes, cl.args[2], 6.0):
        return None
    s = nodes[cl.args[0]]
    if s.kind != "apply" or s.op != "add":
        return None
    for x, three in (s.args, reversed(s.args)):
        if _number(nodes, three, 3.0) and not _constant(nodes, x):
            return Match("hardsigmoid", x, [])
    return None


def _silu(nodes, n):
    if n.op != "mul":
        return None
    for x, sg in (n.args, reversed(n.args)):
        s = nodes[sg]
        if s.kind == "apply" and s.op == "sigmoid" and not _constant(nodes, x) and \
                _same(nodes, s.args[0], x):
            return Match("silu", x, [])
    return None


def _ratio(nodes, over, under):
    """Ratio(over, under) less the factors the two share (selu's alpha = scale * alpha / scale:
    alpha exactly)."""
    over, left = list(over), []
    for u in under:
        k = next((k for k, o in enumerate(over) if _same(nodes, o, u)), None)
        if k is None:
            left.append(u)
        else:
            del over[k]
    return Ratio(over, left)


def _positive(nodes, c):
    """X where condition c is X > 0 or 0 < X, else None. Not X >= 0: at -0 and +0 it takes the
    other branch than torch's kernels, whose zero may then have the other sign (leaky_relu with a
    negative slope)."""
    n = nodes[c]
    if n.kind != "apply" or n.op not in ("gt", "lt"):
        return None
    x, zero = n.args
    if n.op == "lt":
        x, zero = zero, x
    if not _number(nodes, zero, 0.0) or _constant(nodes, x):
        return None
    return x


def _factors(nodes, i):
    """(constant factors, the one factor that is not constant) of a product at node i, the
    latter None where there is none or several."""
    n = nodes[i]
    if n.kind == "apply" and n.op == "mul":
        (ka, a), (kb, b) = _factors(nodes, n.args[0]), _factors(nodes, n.args[1])
        if a is not None and b is not None:
            return [], i
        return ka + kb, a if b is None else b
    if _constant(nodes, i):
        return [i], None
    return [], i


def _constant(nodes, i):
    n = nodes[i]
    return n.kind not in _TENSOR_KINDS and all(_constant(nodes, a) for a in n.args)


def _number(nodes, i, v):
    n = nodes[i]
    return n.kind == "number" and n.value == v


def _same(nodes, i, j):
    """Whether nodes i and j are the same expression."""
    if i == j:
        return True
    a, b = nodes[i], nodes[j]
    if (a.kind, a.op, a.ref, a.value, len(a.args)) != (b.kind, b.op, b.ref, b.value, len(b.args)):
        return False
    if a.kind in ("reduce", "scan"):
        return False  # their over, reduction and scan fields are not compared here
    return all(_same(nodes, x, y) for x, y in zip(a.args, b.args))
