"""Checks of torch_conv.py's arms (torch_conv, torch_conv_cpu), called by test_torch_shaped.cpp
with specs as the python plugin hands them to arms: the arm recognises a convolution by its
statements (strides, dilations, paddings and groups read from the subscripts) and nothing else,
and writes F.conv's (or F.conv_transpose's) result into kq's output; the statements translated for torch_eager
(_torch_shaped.py: F.pad, unfold views, einsum) compute the same. Both must agree with a float64
numpy reference written here, tap by tap, on small random shapes of each spec; and the two
statements of a depthwise-separable convolution (KernelBench 86), which the arm declines.
"""
import itertools
import types

import _torch_shaped
import torch_conv


def _reference(conv, x, w, bias, out_shape):
    """The convolution in float64: for each tap, the strided slice of x (zeros padded in front
    and behind) times the tap's weights."""
    import numpy as np

    n = len(conv.stride)
    taps = w.shape[2:]
    if conv.grouped:  # x [B, G, CG, ...], w [G, CG, OG, ...], y [B, G, OG, ...]: group by group
        return np.stack([_reference(_ungrouped(conv), x[:, g], w[g], None,
                                    [out_shape[0]] + list(out_shape[2:]))
                         for g in range(x.shape[1])], axis=1)
    if conv.transposed:
        return _reference_transposed(conv, x, w, bias, out_shape)
    reach = [conv.stride[d] * (out_shape[2 + d] - 1) + conv.dilation[d] * (taps[d] - 1)
             for d in range(n)]
    widths = [(0, 0), (0, 0)] + [(conv.padding[d], max(0, reach[d] + 1 - conv.padding[d] -
                                                       x.shape[2 + d])) for d in range(n)]
    xp = np.pad(x, widths)
    y = np.zeros(out_shape)
    for k in itertools.product(*(range(t) for t in taps)):
        sl = (slice(None), slice(None)) + tuple(
            slice(conv.dilation[d] * k[d], conv.dilation[d] * k[d] +
                  conv.stride[d] * (out_shape[2 + d] - 1) + 1, conv.stride[d]) for d in range(n))
        xs = xp[sl]
        if conv.depthwise:
            y += xs * w[(slice(None), 0) + k].reshape((1, -1) + (1,) * n)
        else:
            y += np.einsum("bc...,oc->bo...", xs, w[(slice(None), slice(None)) + k])
    if bias is not None:
        y += bias.reshape((1, -1) + (1,) * n)
    return y


def _ungrouped(conv):
    return torch_conv.Conv(conv.x, conv.w, conv.bias, conv.y, conv.stride, conv.dilation,
                           conv.padding, conv.depthwise, conv.transposed)


def _reference_transposed(conv, x, w, bias, out_shape):
    """A transposed convolution in float64: output t takes x[(t + P - D k) / S] times w[c, o, k]
    for each tap k where the division is exact, zeros outside x: x spread out by S (S - 1 zeros
    after each element), read at t + P - D k."""
    import numpy as np

    n = len(conv.stride)
    for d in range(n):
        if conv.stride[d] > 1:
            shape = list(x.shape)
            shape[2 + d] = (shape[2 + d] - 1) * conv.stride[d] + 1
            spread = np.zeros(shape)
            spread[(slice(None),) * (2 + d) + (slice(None, None, conv.stride[d]),)] = x
            x = spread
    taps = w.shape[2:]
    front = [conv.dilation[d] * (taps[d] - 1) for d in range(n)]
    widths = [(0, 0), (0, 0)] + [(front[d], out_shape[2 + d] + conv.padding[d])
                                 for d in range(n)]
    xp = np.pad(x, widths)
    y = np.zeros(out_shape)
    for k in itertools.product(*(range(t) for t in taps)):
        sl = (slice(None), slice(None)) + tuple(
            slice(front[d] + conv.padding[d] - conv.dilation[d] * k[d],
                  front[d] + conv.padding[d] - conv.dilation[d] * k[d] + out_shape[2 + d])
            for d in range(n))
        y += np.einsum("bc...,co->bo...", xp[sl], w[(slice(None), slice(None)) + k])
    if bias is not None:
        y += bias.reshape((1, -1) + (1,) * n)
    return y


def _shape(t, dims):
    return [dims[e] if isinstance(e, str) else e for e in t.shape]


def _dims(spec, base):
    """base's dims with the derived ones computed from their formulas (Python's // rounds down
    as kq's / does on the non-negative values here)."""
    dims = dict(base)
    for d in spec.program.dims:
        if d.derived is not None:
            dims[d.name] = eval(d.derived.replace("/", "//"), {}, dict(dims))
    return dims


def _check(spec, base, seed):
    """What is wrong with torch_conv_cpu and the translated statements on spec at dims base."""
    import numpy as np
    import torch

    found = []
    p = spec.program
    conv = torch_conv.recognise(spec)
    if isinstance(conv, str):
        return ["%s: not recognised: %s" % (spec.op, conv)]
    arm = torch_conv.TorchConvCpu()
    why = arm.supports(spec)
    if why is not None:
        return ["%s: declined: %s" % (spec.op, why)]
    dims = _dims(spec, base)
    g = torch.Generator().manual_seed(seed)
    inputs = [torch.randn(*_shape(t, dims), generator=g) for t in p.tensors if t.role == "input"]
    out = [t for t in p.tensors if t.role == "output"][0]
    arrays = {t.name: x.double().numpy() for t, x in
              zip([t for t in p.tensors if t.role == "input"], inputs)}
    names = [t.name for t in p.tensors]
    want = _reference(conv, arrays[names[conv.x]], arrays[names[conv.w]],
                      arrays[names[conv.bias]] if conv.bias is not None else None,
                      _shape(out, dims))
    scale = max(1.0, float(np.max(np.abs(want))))
    y = torch.full(_shape(out, dims), float("nan"))
    arm.prepare(types.SimpleNamespace(spec=spec, inputs=inputs, outputs=[y]))
    arm.run(inputs, [y])
    err = float(np.max(np.abs(y.double().numpy() - want)))
    if not err <= 1e-5 * scale:
        found.append("%s at %s: torch_conv_cpu differs from the reference by %g" %
                     (spec.op, base, err))
    eager = _torch_shaped.define(_torch_shaped.source(spec, "eager"), "eager", spec)
    y.fill_(float("nan"))
    eager(*inputs, y)
    err = float(np.max(np.abs(y.double().numpy() - want)))
    if not err <= 1e-5 * scale:
        found.append("%s at %s: the translated statements differ from the reference by %g" %
                     (spec.op, base, err))
    return found


# Small shapes of each shipped convolution: ragged lengths, a point where the last window
# reaches the end exactly and one where it stops short.
_POINTS = {
    "conv2d_k11_s4_p2_bias": [{"B": 2, "C": 3, "O": 5, "H": 41, "W": 30}],
    "conv3d_k3": [{"B": 2, "C": 3, "O": 4, "D": 5, "H": 6, "W": 7}],
    "conv2d_k3": [{"B": 2, "C": 3, "O": 5, "H": 9, "W": 17}],
    "conv1d_k3": [{"B": 2, "C": 3, "O": 5, "L": 40}],
    "conv1d_k3_s3_d4": [{"B": 2, "C": 3, "O": 5, "L": 40}, {"B": 1, "C": 2, "O": 3, "L": 42}],
    "conv2d_k5x9_p2x4_d2x3": [{"B": 2, "C": 3, "O": 5, "H": 13, "W": 40}],
    "depthwise_conv2d_k3": [{"B": 2, "C": 3, "H": 9, "W": 17}],
    "conv2d_k5x7": [{"B": 2, "C": 3, "O": 4, "H": 9, "W": 17}],
    "conv2d_k5x9": [{"B": 2, "C": 3, "O": 4, "H": 9, "W": 17}],
    "conv2d_k3x3": [{"B": 2, "C": 3, "O": 4, "H": 9, "W": 17}],
    "conv3d_k3x3x1": [{"B": 2, "C": 3, "O": 4, "D": 5, "H": 6, "W": 3}],
    "conv3d_k3x5x7": [{"B": 2, "C": 3, "O": 4, "D": 5, "H": 6, "W": 9}],
    "conv3d_k3x5x7_asymmetric_input": [{"B": 1, "C": 2, "O": 3, "D": 3, "H": 7, "W": 10}],
    "depthwise_conv2d_k3x1": [{"B": 2, "C": 3, "H": 9, "W": 5}],
    "depthwise_conv2d_k3x3_asymmetric_input": [{"B": 2, "C": 4, "H": 5, "W": 17}],
    "depthwise_conv2d_k3x7": [{"B": 2, "C": 3, "H": 9, "W": 17}],
    "conv_transpose2d_k3x3": [{"B": 2, "C": 3, "O": 4, "H": 5, "W": 7}],
    "conv_transpose3d_k3x5x7": [{"B": 1, "C": 3, "O": 2, "D": 2, "H": 3, "W": 4}],
    "conv_transpose3d_k3x3x3": [{"B": 2, "C": 3, "O": 4, "D": 2, "H": 3, "W": 4}],
    "conv_transpose1d_k3": [{"B": 2, "C": 3, "O": 5, "L": 11}, {"B": 1, "C": 2, "O": 3, "L": 1}],
    "conv_transpose2d_k3x7": [{"B": 2, "C": 3, "O": 4, "H": 5, "W": 7}],
    "conv_transpose3d_k3x5x5": [{"B": 1, "C": 3, "O": 2, "D": 2, "H": 3, "W": 4}],
    "conv_transpose2d_k3x5": [{"B": 2, "C": 3, "O": 4, "H": 5, "W": 7}],
    "conv_transpose3d_k3x3x3_48to24": [{"B": 1, "C": 3, "O": 2, "D": 2, "H": 3, "W": 4}],
    "conv_transpose2d_k3x3_asymmetric_input": [{"B": 2, "C": 3, "O": 4, "H": 5, "W": 9}],
    "conv_transpose1d_k5_d3": [{"B": 2, "C": 3, "O": 5, "L": 11}],
    "conv_transpose2d_k3x7_p1x3": [{"B": 2, "C": 3, "O": 4, "H": 5, "W": 7}],
    "conv_transpose3d_k3x3x3_s2x2x2_p1x1x1_d2x2x2": [{"B": 1, "C": 3, "O": 2, "D": 2, "H": 3,
                                                      "W": 4}],
    "conv_transpose1d_k3_s2_p1_d2": [{"B": 2, "C": 3, "O": 5, "L": 11}, {"B": 1, "C": 2, "O": 3,
                                                                        "L": 1}],
    "conv_transpose2d_k3x3_s5x5_p1x1_d2x2": [{"B": 2, "C": 3, "O": 4, "H": 3, "W": 4}],
    "conv_transpose3d_grouped_k3x5x7": [{"B": 1, "G": 2, "CG": 2, "OG": 3, "D": 2, "H": 3,
                                         "W": 4}],
    "conv_transpose3d_k3x3x3_s2x2x2_p1x1x1": [{"B": 2, "C": 3, "O": 2, "D": 2, "H": 3, "W": 4}],
    "conv_transpose2d_grouped_k3x5": [{"B": 2, "G": 2, "CG": 3, "OG": 2, "H": 5, "W": 7}],
}


def _precision_now():
    """cuDNN's f32 convolution precision as the arm sets it (torch_conv.ConvPrecision)."""
    return torch_conv.ConvPrecision(False).now()


def precision_problems(spec):
    """What is wrong with the CUDA arm's precision: during its F.conv call, cuDNN's f32
    convolutions are IEEE (a spec that admits TF32: TF32), whatever they were before; after the
    call, and after a call that raised, what they were. Run on the CPU: the arm is prepared as
    on CUDA (its synchronisation a no-op) and its F.conv watched."""
    import torch

    base = _POINTS[spec.op][0]
    dims = _dims(spec, base)
    p = spec.program
    inputs = [torch.randn(*_shape(t, dims), generator=torch.Generator().manual_seed(1))
              for t in p.tensors if t.role == "input"]
    out = [t for t in p.tensors if t.role == "output"][0]
    with torch_conv.ConvPrecision(False) as c:
        ieee = c.now()
    with torch_conv.ConvPrecision(True) as c:
        tf32 = c.now()
    found = []
    synchronize = torch.cuda.synchronize
    torch.cuda.synchronize = lambda *args: None
    try:
        for admits in (False, True):
            s = types.SimpleNamespace(**vars(spec))
            s.tf32 = admits
            want = tf32 if admits else ieee
            for before in (tf32, ieee):
                with torch_conv.ConvPrecision(before == tf32):
                    arm = torch_conv.TorchConv()
                    y = torch.full(_shape(out, dims), float("nan"))
                    arm.prepare(types.SimpleNamespace(spec=s, inputs=inputs, outputs=[y]))
                    seen, fn, fail = [], arm._fn, []

                    def watched(*args, **kwargs):
                        seen.append(_precision_now())
                        if fail:
                            raise RuntimeError("a failing call")
                        return fn(*args, **kwargs)

                    arm._fn = watched
                    arm.run(inputs, [y])
                    fail.append(True)
                    try:
                        arm.run(inputs, [y])
                    except RuntimeError:
                        pass
                    where = "tf32 %s, %r before" % (admits, before)
                    if seen != [want, want]:
                        found.append("%s: %s: F.conv ran under %r, not %r" % (spec.op, where,
                                                                                seen, want))
                    if _precision_now() != before:
                        found.append("%s: %s: %r after the calls" % (spec.op, where,
                                                                     _precision_now()))
                    if bool(torch.isnan(y).any()):
                        found.append("%s: %s: the output not written" % (spec.op, where))
    finally:
        torch.cuda.synchronize = synchronize
    return found


def separable_problems(spec):
    """What is wrong with the translated statements of KernelBench 86 (a depthwise convolution,
    padded, then a pointwise one: two statements, which torch_conv declines)."""
    import numpy as np
    import torch

    why = torch_conv.TorchConvCpu().supports(spec)
    if not why or "computes a convolution only" not in why:
        return ["%s: %r, not a refusal of two statements" % (spec.op, why)]
    dims = _dims(spec, {"B": 2, "C": 3, "O": 5, "H": 9, "W": 17})
    g = torch.Generator().manual_seed(3)
    x = torch.randn(2, 3, 9, 17, generator=g)
    dw = torch.randn(3, 1, 3, 3, generator=g)
    pw = torch.randn(5, 3, 1, 1, generator=g)
    depthwise = torch_conv.Conv(0, 1, None, 2, (1, 1), (1, 1), (1, 1), True)
    pointwise = torch_conv.Conv(0, 1, None, 2, (1, 1), (1, 1), (0, 0), False)
    t = _reference(depthwise, x.double().numpy(), dw.double().numpy(), None, [2, 3, 9, 17])
    want = _reference(pointwise, t, pw.double().numpy(), None, [2, 5, 9, 17])
    y = torch.full([2, 5, dims["OH"], dims["OW"]], float("nan"))
    _torch_shaped.define(_torch_shaped.source(spec, "eager"), "eager", spec)(x, dw, pw, y)
    err = float(np.max(np.abs(y.double().numpy() - want)))
    if not err <= 1e-5 * max(1.0, float(np.max(np.abs(want)))):
        return ["%s: the translated statements differ from the reference by %g" % (spec.op, err)]
    return []


def problems(convs, others):
    """convs: the shipped convolution specs; others: specs the arm must decline, as (spec, what
    its reason says)."""
    found = []
    for spec in convs:
        if spec.op not in _POINTS:
            found.append("%s: no points for it in torch_conv_check._POINTS" % spec.op)
            continue
        for seed, base in enumerate(_POINTS[spec.op]):
            try:
                found += _check(spec, base, seed)
            except Exception as e:  # named with the spec and its point
                found.append("%s at %s: %s: %s" % (spec.op, base, type(e).__name__, e))
    arm = torch_conv.TorchConvCpu()
    for spec, want in others:
        why = arm.supports(spec)
        if not why or want not in why:
            found.append("%s: %r, not a refusal saying %r" % (spec.op, why, want))
    return found
