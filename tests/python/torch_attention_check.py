"""Checks of torch_attention.py's arms (torch_sdpa, torch_sdpa_cpu), called by
test_torch_shaped.cpp with specs as the python plugin hands them to arms: the arm recognises
attention by its statements and nothing else, declines mixed dtypes, and writes
F.scaled_dot_product_attention's result into kq's output, which must agree with a float64 numpy
reference of the statements. Where this torch has no F.scaled_dot_product_attention (1.13), the
arm must say so, and a float64 stand-in takes its place so that the rest still runs.
"""
import types

import torch_attention


def _reference(q, k, v):
    import numpy as np

    s = np.einsum("bhie,bhje->bhij", q, k) / np.sqrt(q.shape[-1])
    p = np.exp(s - s.max(axis=-1, keepdims=True))
    return np.einsum("bhij,bhjd->bhid", p, v) / p.sum(axis=-1)[..., None]


def _stand_in(q, k, v):
    """softmax(q k^T / sqrt(E)) v in float64, for a torch without the function."""
    import torch

    s = torch.einsum("bhie,bhje->bhij", q.double(), k.double()) / q.shape[-1] ** 0.5
    return (torch.softmax(s, dim=-1) @ v.double()).to(q.dtype)


def problems(attention, softmax, mixed):
    """attention: specs/kernelbench/97's spec; softmax: one it must decline; mixed: attention
    with a bf16 output, which it must decline too."""
    import numpy as np
    import torch
    import torch.nn.functional as F

    found = []
    arm = torch_attention.TorchSdpaCpu()
    why = arm.supports(softmax)
    if not why or "computes softmax(q k^T / sqrt(E)) v" not in why:
        found.append("a softmax spec: %r" % why)
    why = arm.supports(mixed)
    if not why or "one float dtype" not in why:
        found.append("a bf16 output beside f32 inputs: %r" % why)
    why = arm.supports(attention)
    has_sdpa = hasattr(F, "scaled_dot_product_attention")
    if has_sdpa and why is not None:
        found.append("declined attention: %r" % why)
    if not has_sdpa:
        if not why or "has no F.scaled_dot_product_attention" not in why:
            found.append("this torch lacks the function, and supports() said %r" % why)
        F.scaled_dot_product_attention = _stand_in
    try:
        g = torch.Generator().manual_seed(7)
        b, h, l, s, e, ev = 2, 3, 5, 7, 4, 6
        q, k, v = (torch.randn(*shape, generator=g) * 3 for shape in
                   ((b, h, l, e), (b, h, s, e), (b, h, s, ev)))
        y = torch.full((b, h, l, ev), float("nan"))
        problem = types.SimpleNamespace(spec=attention, inputs=[q, k, v], outputs=[y])
        arm.prepare(problem)
        arm.run([q, k, v], [y])
        want = _reference(q.double().numpy(), k.double().numpy(), v.double().numpy())
        err = float(np.max(np.abs(y.double().numpy() - want)))
        if not err <= 1e-5 * float(np.max(np.abs(want))):
            found.append("y differs from the float64 reference by %g" % err)
        text = dict((name, body) for _, name, body in arm.artifacts()).get("sdpa.txt", "")
        if "2x3x5x4 2x3x7x4 2x3x7x6:" not in text:
            found.append("the artifact names no backend for the shapes: %r" % text)
    finally:
        if not has_sdpa:
            del F.scaled_dot_product_attention
    return found
