"""MaxPool, AveragePool, LpPool, their Global forms, and MaxUnpool.

Common cases run torch's pooling kernels: symmetric pads as the kernel's padding; asymmetric
pads, and a ceil mode torch sizes otherwise, as an explicit ``F.pad`` (-inf for MaxPool, zeros
for an AveragePool that counts the padding) before an unpadded kernel, or (an AveragePool that
does not count it) as the kernel's symmetric padding with the extra windows cut off. Dilated
average pooling, Lp pooling, integer MaxPool and ONNX-layout argmax indices go through a generic
window view of the input.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from onnxport import importer
from onnxport.opmath.pads import explicit_pads, pool_settings

#: testkit tolerances beyond the float32 default (rtol 1e-5, atol 1e-6): op -> dtype -> (rtol, atol, reason)
TEST_TOLERANCES = {
    "AveragePool": {"float32": (2e-4, 1e-4, "the official node case's expected values are written to 4 decimals (measured |diff| 5e-5..8e-5)")},
}


def _settings(x, kernel_shape, strides, dilations, auto_pad, pads, ceil_mode):
    """Kernel, strides, dilations, begin/end pads and output sizes following the ONNX pooling rules."""
    st = pool_settings(x.shape[2:], kernel_shape, strides, dilations, auto_pad, pads, ceil_mode)
    return st.kernel, st.strides, st.dilations, st.begins, st.ends, st.out


def _windows(x, kernel, strides, dilations, begins, ends, out, fill):
    """View ``x`` as [N, C, *out, *kernel] windows; padding (explicit and ceil-mode) is ``fill``."""
    nd = len(kernel)
    pad = []
    for i in reversed(range(nd)):
        need = (out[i] - 1) * strides[i] + (kernel[i] - 1) * dilations[i] + 1
        extra = need - (x.shape[2 + i] + begins[i] + ends[i])
        pad += [begins[i], ends[i] + max(extra, 0)]
    xp = F.pad(x, pad, value=fill) if any(pad) else x
    for i in range(nd):
        dim = 2 + i
        span = (kernel[i] - 1) * dilations[i] + 1
        xp = xp.narrow(dim, 0, (out[i] - 1) * strides[i] + span)
        xp = xp.unfold(dim, span, strides[i])
        if dilations[i] != 1:
            xp = xp[..., :: dilations[i]]
    return xp  # unfold appends the kernel dims last, in spatial order


def _flat_kernel(w, nd):
    return w.reshape(*w.shape[: 2 + nd], -1)


def _pad_mask(x, kernel, strides, dilations, begins, ends, out, include_pad):
    """Per-window element counts: real data, plus explicit padding when ``include_pad``."""
    ones = torch.ones((1, 1, *x.shape[2:]), dtype=x.dtype, device=x.device)
    if include_pad:
        pad = []
        for i in reversed(range(len(kernel))):
            pad += [begins[i], ends[i]]
        ones = F.pad(ones, pad, value=1.0)
        begins, ends = [0] * len(kernel), [0] * len(kernel)
    w = _windows(ones, kernel, strides, dilations, begins, ends, out, 0.0)
    return _flat_kernel(w, len(kernel)).sum(-1)


def _symmetric(begins, ends, kernel):
    return begins == ends and all(2 * p <= k for p, k in zip(begins, kernel))


def _padded(x, kernel, strides, dilations, begins, ends, out, fill):
    """``x`` padded so that unpadded floor-mode pooling gives the ``out`` ONNX windows: the end
    padding is what the last window reaches (more for a ceil-mode window, less when it stops short)."""
    pad = []
    for i in reversed(range(len(kernel))):
        need = (out[i] - 1) * strides[i] + (kernel[i] - 1) * dilations[i] + 1
        pad += [begins[i], max(need - x.shape[2 + i] - begins[i], 0)]
    return F.pad(x, pad, value=fill) if any(pad) else x


def _cut(y, starts, out):
    """``y``'s windows ``starts[i]`` .. ``starts[i] + out[i]`` along each spatial dim, or None
    when it has too few."""
    for i, (j, n) in enumerate(zip(starts, out)):
        if y.shape[2 + i] < j + n:
            return None
        if j or y.shape[2 + i] != n:
            y = y.narrow(2 + i, j, n)
    return y


@importer("MaxPool", since=22)
def max_pool(ctx, x, *, auto_pad, ceil_mode, dilations, kernel_shape, pads, storage_order, strides):
    nd = len(kernel_shape)
    if nd not in (1, 2, 3):
        raise ctx.error(f"{nd}-D MaxPool is not supported by torch")
    kernel, strides, dilations, begins, ends, out = _settings(
        x, kernel_shape, strides, dilations, auto_pad, pads, ceil_mode)
    want_idx = ctx.num_outputs > 1 and ctx.output_used(1)
    fill = float("-inf") if x.is_floating_point() else torch.iinfo(x.dtype).min
    if not want_idx and x.is_floating_point():
        fn = (F.max_pool1d, F.max_pool2d, F.max_pool3d)[nd - 1]
        if _symmetric(begins, ends, kernel):
            y = fn(x, kernel, strides, begins, dilations, ceil_mode=bool(ceil_mode))
            if list(y.shape[2:]) == out:
                return y if ctx.num_outputs == 1 else (y, None)
        y = fn(_padded(x, kernel, strides, dilations, begins, ends, out, fill), kernel, strides, 0, dilations)
        if list(y.shape[2:]) == out:
            return y if ctx.num_outputs == 1 else (y, None)
    w = _flat_kernel(_windows(x, kernel, strides, dilations, begins, ends, out, fill), nd)
    y, arg = w.max(dim=-1)
    if not want_idx:
        return y if ctx.num_outputs == 1 else (y, None)
    # window position -> input coordinates -> ONNX flat index (n, c included)
    spatial = list(x.shape[2:])
    coords = []
    rem = arg
    for i in reversed(range(nd)):
        coords.append(rem % kernel[i])
        rem = rem // kernel[i]
    coords.reverse()
    pos = []
    for i in range(nd):
        start = torch.arange(out[i], device=x.device) * strides[i] - begins[i]
        start = start.reshape([out[i] if j == i else 1 for j in range(nd)])
        pos.append(start + coords[i] * dilations[i])
    order = list(range(nd)) if not storage_order else list(reversed(range(nd)))
    flat = torch.zeros_like(arg)
    for i in order:
        flat = flat * spatial[i] + pos[i]
    n, c = x.shape[:2]
    base = torch.arange(n * c, device=x.device).reshape(n, c, *([1] * nd)) * math.prod(spatial)
    return y, (flat + base).to(torch.int64)


@importer("AveragePool", since=22)
def average_pool(ctx, x, *, auto_pad, ceil_mode, count_include_pad, dilations, kernel_shape, pads, strides):
    nd = len(kernel_shape)
    kernel, strides, dilations, begins, ends, out = _settings(
        x, kernel_shape, strides, dilations, auto_pad, pads, ceil_mode)
    if nd in (1, 2, 3) and all(d == 1 for d in dilations):
        fn = (F.avg_pool1d, F.avg_pool2d, F.avg_pool3d)[nd - 1]
        half_cpu = x.device.type == "cpu" and x.dtype in (torch.float16, torch.bfloat16)
        xs = x.float() if half_cpu else x  # torch's CPU avg_pool3d has no half kernel
        if _symmetric(begins, ends, kernel):
            y = fn(xs, kernel, strides, begins, bool(ceil_mode), bool(count_include_pad))
            if list(y.shape[2:]) == out:
                return y.to(x.dtype)
        if count_include_pad:
            # the padding counts: zeros padded in; no ceil-mode window may reach past it
            xp = _padded(xs, kernel, strides, dilations, begins, ends, out, 0.0)
            if all(n + b + e >= p for n, b, e, p in zip(x.shape[2:], begins, ends, xp.shape[2:])):
                y = fn(xp, kernel, strides, 0)
                if list(y.shape[2:]) == out:
                    return y.to(x.dtype)
        else:
            # only real elements count, wherever the padding ends: torch's symmetric padding
            # covering both sides, less the windows ONNX does not have
            pad = [max(b, e) for b, e in zip(begins, ends)]
            if all(2 * p <= k and (p - b) % s == 0 for p, b, k, s in zip(pad, begins, kernel, strides)):
                y = fn(xs, kernel, strides, pad, bool(ceil_mode), False)
                y = _cut(y, [(p - b) // s for p, b, s in zip(pad, begins, strides)], out)
                if y is not None:
                    return y.to(x.dtype)
    w = _flat_kernel(_windows(x, kernel, strides, dilations, begins, ends, out, 0.0), nd)
    count = _pad_mask(x, kernel, strides, dilations, begins, ends, out, bool(count_include_pad))
    return w.sum(-1) / count


@importer("LpPool", since=22)
def lp_pool(ctx, x, *, auto_pad, ceil_mode, dilations, kernel_shape, p, pads, strides):
    nd = len(kernel_shape)
    kernel, strides, dilations, begins, ends, out = _settings(
        x, kernel_shape, strides, dilations, auto_pad, pads, ceil_mode)
    w = _flat_kernel(_windows(x, kernel, strides, dilations, begins, ends, out, 0.0), nd)
    return w.abs().pow(p).sum(-1).pow(1.0 / p)


@importer("GlobalAveragePool", since=22)
def global_average_pool(ctx, x):
    return x.mean(dim=tuple(range(2, x.dim())), keepdim=True)


@importer("GlobalMaxPool", since=22)
def global_max_pool(ctx, x):
    return x.amax(dim=tuple(range(2, x.dim())), keepdim=True)


# its cases follow from ONNX semantics: onnxport_testkit.semantic_cases
@importer("GlobalLpPool", since=22)
def global_lp_pool(ctx, x, *, p):
    return x.abs().pow(p).sum(dim=tuple(range(2, x.dim())), keepdim=True).pow(1.0 / p)


@importer("MaxUnpool", since=22)
def max_unpool(ctx, x, indices, output_shape=None, *, kernel_shape, pads, strides):
    nd = len(kernel_shape)
    strides = list(strides or [1] * nd)
    pads = explicit_pads(pads, nd)
    inferred = list(x.shape[:2]) + [
        (int(x.shape[2 + i]) - 1) * strides[i] + int(kernel_shape[i]) - pads[i] - pads[nd + i]
        for i in range(nd)
    ]
    y = torch.zeros(math.prod(inferred), dtype=x.dtype, device=x.device)
    y = y.scatter(0, indices.reshape(-1).to(torch.int64), x.reshape(-1)).reshape(inferred)
    if output_shape is None:
        return y
    # the indices address the inferred shape; a larger output_shape pads it at the end
    shape = [int(v) for v in output_shape.reshape(-1).tolist()]
    pad = []
    for have, want in zip(reversed(inferred), reversed(shape)):
        pad += [0, want - have]
    return F.pad(y, pad)
