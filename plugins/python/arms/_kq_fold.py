"""kq's float64 semantics (kq/semantics.hpp) on Python floats, for folding an operation whose
operands are all literals into one literal when a statement is translated: max and min keep NaN
and order -0 below +0, log and division give kq's infinities and NaNs instead of raising."""
import math


def kq_max(a, b):
    if a != a:
        return a
    if b != b:
        return b
    if a == b:
        return b if math.copysign(1.0, a) < 0 else a
    return a if a > b else b


def kq_min(a, b):
    if a != a:
        return a
    if b != b:
        return b
    if a == b:
        return a if math.copysign(1.0, a) < 0 else b
    return a if a < b else b


def _exp(x):
    try:
        return math.exp(x)
    except OverflowError:
        return math.inf


def _log(x):
    if x != x or x == math.inf:
        return x
    return -math.inf if x == 0 else math.nan if x < 0 else math.log(x)


def _div(a, b):
    if b == 0:
        if a != a or a == 0:
            return math.nan
        return math.copysign(math.inf, a) * math.copysign(1.0, b)
    return a / b


def _sigmoid(x):
    return 1.0 / (1.0 + _exp(-x))


# An operation's value on literal operands, by kq's name of the operation.
FOLD = {
    "neg": lambda a: -a,
    "relu": lambda a: a if a != a else (a if a > 0 else 0.0),
    "abs": abs, "exp": _exp, "log": _log,
    "sqrt": lambda a: math.nan if a < 0 else math.sqrt(a),
    "tanh": math.tanh, "sigmoid": _sigmoid, "erf": math.erf,
    "gelu": lambda a: 0.5 * a * math.erfc(-a / math.sqrt(2.0)),
    "silu": lambda a: a * _sigmoid(a),
    "add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
    "div": _div, "max": kq_max, "min": kq_min,
    "lt": lambda a, b: float(a < b), "le": lambda a, b: float(a <= b),
    "gt": lambda a, b: float(a > b), "ge": lambda a, b: float(a >= b),
    "eq": lambda a, b: float(a == b), "ne": lambda a, b: float(a != b),
    "select": lambda c, a, b: a if c != 0 else b,
    "clamp": lambda x, lo, hi: kq_min(kq_max(x, lo), hi),
}
