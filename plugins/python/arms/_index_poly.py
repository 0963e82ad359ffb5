"""Index arithmetic as polynomials, for reading a subscript as an affine view: a polynomial is
{(index variable or None, dims as a sorted tuple): int coefficient}, so that 2 * i + W * j + 1
is {("i", ()): 2, ("j", ("W",)): 1, (None, ()): 1}."""


def mul(p, q):
    """p * q, or None where it is not affine (a product of two index variables)."""
    out = {}
    for (v, d), c in p.items():
        for (w, e), k in q.items():
            if v is not None and w is not None:
                return None  # a product of two index variables: not affine
            key = (v if v is not None else w, tuple(sorted(d + e)))
            out[key] = out.get(key, 0) + c * k
    return {k: c for k, c in out.items() if c != 0}


def add(p, q, sign=1):
    """p + q, or p - q with sign -1."""
    out = dict(p)
    for k, c in q.items():
        out[k] = out.get(k, 0) + sign * c
    return {k: c for k, c in out.items() if c != 0}


def monomial(extent):
    """An extent (a dim's name or an int) as (coefficient, dims)."""
    return (1, (extent,)) if isinstance(extent, str) else (int(extent), ())


def times(m, n):
    """The product of two (coefficient, dims) monomials."""
    return (m[0] * n[0], tuple(sorted(m[1] + n[1])))
