"""Pooling: max_pool1d/2d/3d (with_indices), avg_pool1d/2d/3d, adaptive_avg_pool1d/2d/3d,
adaptive_max_pool1d/2d/3d (-> MaxPool, AveragePool, GlobalAveragePool, GlobalMaxPool, MatMul)."""

from __future__ import annotations

import math

import numpy as np
import onnx_ir as ir
import torch
import torch.nn.functional as F
from torch import nn

from onnxport import Sample, exporter

from ._spatial import per_dim

_X = torch.randn(2, 3, 9, 9)
_X1 = torch.randn(2, 3, 11)
_X3 = torch.randn(1, 2, 5, 6, 7)


def _per_dim(g, name, values, nd, default=None):
    return per_dim(g, "pooling", name, values, nd, default)


def _const(g, arr, dtype):
    """A constant of ``dtype`` (the builder keeps float64 arrays only when told)."""
    return g.const(np.asarray(arr).astype(dtype.numpy()), dtype if dtype == ir.DataType.DOUBLE else None)


def _batched(g, x, nd, pool):
    """``pool(x)`` on a batched input; an unbatched one (C, spatial...) gets a batch dim of 1 around it."""
    rank = g.rank(x)
    if rank == nd + 2:
        return pool(x)
    if rank != nd + 1:
        raise g.error(f"a rank-{rank} input to {nd}-d pooling")
    batch = g.const(np.asarray([0], dtype=np.int64))
    return g.op("Squeeze", pool(g.op("Unsqueeze", x, batch)), batch)


def _values_only(g, y):
    """(values, indices) with the indices left out: they cannot be used (ONNX numbers them over
    the whole tensor, torch per plane)."""
    for user in g.fx.users:
        if user.args[1] == 1 and user.users:
            raise g.error("the indices of max pooling (return_indices, max_unpool) are not supported")
    return (y, None)


def _max_pool(g, x, nd, kernel_size, stride, padding, dilation, ceil_mode):
    """MaxPool; its ceil_mode drops a last window that starts in the right padding, as torch does."""
    kernel = _per_dim(g, "kernel_size", kernel_size, nd)
    attrs = dict(kernel_shape=kernel, strides=_per_dim(g, "stride", stride, nd, kernel),
                 pads=_per_dim(g, "padding", padding, nd) * 2, dilations=_per_dim(g, "dilation", dilation, nd),
                 ceil_mode=int(ceil_mode))
    return _batched(g, x, nd, lambda v: g.op("MaxPool", v, **attrs))


def _max_pool_prim(nd, with_indices):
    def prim(g, x, kernel_size, stride=(), padding=(0,), dilation=(1,), ceil_mode=False):
        y = _max_pool(g, x, nd, kernel_size, stride, padding, dilation, ceil_mode)
        return _values_only(g, y) if with_indices else y

    prim.__name__ = prim.__qualname__ = f"max_pool{nd}d" + ("_with_indices" if with_indices else "")
    prim.__doc__ = "MaxPool" + ("; the indices are not exported." if with_indices else ".")
    prim.__module__ = __name__
    return prim


max_pool1d = exporter(
    "aten.max_pool1d.default",
    samples=[Sample(nn.MaxPool1d(3, 2, 1), (_X1,), emits=("MaxPool",)),
             Sample(nn.MaxPool1d(2, dilation=2, ceil_mode=True), (_X1,), emits=("MaxPool",), name="dilated_ceil"),
             Sample(nn.MaxPool1d(3, 2), (torch.randn(3, 8),), emits=("MaxPool", "Squeeze"), name="unbatched")],
)(_max_pool_prim(1, False))

max_pool1d_with_indices = exporter(
    "aten.max_pool1d_with_indices.default",
    samples=[Sample(lambda x: F.max_pool1d(x, 2, return_indices=True)[0], (_X1,), emits=("MaxPool",))],
)(_max_pool_prim(1, True))

max_pool2d = exporter(
    "aten.max_pool2d.default",
    samples=[Sample(nn.MaxPool2d(3, 2, 1), (_X,), emits=("MaxPool",)),
             Sample(nn.MaxPool2d((3, 2), (2, 1), (1, 0), dilation=(1, 2), ceil_mode=True), (torch.randn(1, 2, 7, 8),),
                    emits=("MaxPool",), name="ceil_padding"),
             Sample(nn.MaxPool2d(2), (torch.randn(3, 6, 6),), emits=("MaxPool", "Squeeze"), name="unbatched")],
)(_max_pool_prim(2, False))

max_pool2d_with_indices = exporter(
    "aten.max_pool2d_with_indices.default",
    samples=[Sample(nn.MaxPool2d(3, 2, 1), (_X,), emits=("MaxPool",)),
             Sample(nn.MaxPool2d(2, ceil_mode=True), (_X,), emits=("MaxPool",), name="ceil")],
)(_max_pool_prim(2, True))

max_pool3d = exporter(
    "aten.max_pool3d.default",
    samples=[Sample(nn.MaxPool3d(2), (_X3,), emits=("MaxPool",)),
             Sample(nn.MaxPool3d(3, (1, 2, 2), 1, ceil_mode=True), (_X3,), emits=("MaxPool",), name="ceil")],
)(_max_pool_prim(3, False))

max_pool3d_with_indices = exporter(
    "aten.max_pool3d_with_indices.default",
    samples=[Sample(nn.MaxPool3d((2, 3, 2), ceil_mode=True), (_X3,), emits=("MaxPool",))],
)(_max_pool_prim(3, True))


def _ceil_counts(g, x, nd, kernel, stride, padding, ceil_mode):
    """Per output position, the window size torch divides by when it counts the padding: the
    kernel, less what of a ceil_mode window lies past the right padding. An int when constant."""
    full = math.prod(kernel)
    if not ceil_mode:
        return full
    sizes = list(x.shape)[-nd:]
    if not all(isinstance(s, int) for s in sizes):
        raise g.error("avg pooling with divisor_override and ceil_mode needs static spatial sizes")
    counts = []
    for n, k, s, p in zip(sizes, kernel, stride, padding):
        out = -(-(n + 2 * p - k) // s) + 1
        if (out - 1) * s >= n + p:
            out -= 1
        starts = np.arange(out) * s - p
        counts.append(np.minimum(starts + k, n + p) - starts)
    table = counts[0]
    for c in counts[1:]:
        table = np.multiply.outer(table, c)
    return full if (table == full).all() else table


def _avg_pool(g, x, nd, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override=None):
    """AveragePool (its ceil_mode windows and divisors agree with torch's); divisor_override as
    the padded average times the window size over the divisor."""
    kernel = _per_dim(g, "kernel_size", kernel_size, nd)
    stride = _per_dim(g, "stride", stride, nd, kernel)
    padding = _per_dim(g, "padding", padding, nd)
    if divisor_override is not None:
        count_include_pad = True
    attrs = dict(kernel_shape=kernel, strides=stride, pads=padding * 2, ceil_mode=int(ceil_mode),
                 count_include_pad=int(count_include_pad))
    y = _batched(g, x, nd, lambda v: g.op("AveragePool", v, **attrs))
    if divisor_override is None:
        return y
    if not divisor_override:
        raise g.error("divisor_override must not be 0")
    counts = _ceil_counts(g, x, nd, kernel, stride, padding, ceil_mode)
    scale = np.asarray(counts, dtype=np.float64) / float(divisor_override)
    return g.op("Mul", y, _const(g, scale, x.dtype))


@exporter(
    "aten.avg_pool1d.default",
    samples=[Sample(nn.AvgPool1d(3, 2, 1), (_X1,), emits=("AveragePool",)),
             Sample(nn.AvgPool1d(4, 3, 2, ceil_mode=True, count_include_pad=False), (_X1,), emits=("AveragePool",),
                    name="exclude_pad_ceil")],
)
def avg_pool1d(g, x, kernel_size, stride=(), padding=(0,), ceil_mode=False, count_include_pad=True):
    return _avg_pool(g, x, 1, kernel_size, stride, padding, ceil_mode, count_include_pad)


@exporter(
    "aten.avg_pool2d.default",
    samples=[Sample(nn.AvgPool2d(3, 2, 1), (_X,), emits=("AveragePool",)),
             Sample(nn.AvgPool2d(3, 2, 1, count_include_pad=False, ceil_mode=True), (_X,), emits=("AveragePool",), name="exclude_pad"),
             Sample(nn.AvgPool2d(3, 2, 1, ceil_mode=True), (torch.randn(2, 3, 8, 8),), emits=("AveragePool",), name="ceil_include_pad"),
             Sample(nn.AvgPool2d(2, divisor_override=3), (_X,), emits=("AveragePool", "Mul"), name="divisor"),
             Sample(nn.AvgPool2d(3, 2, 1, ceil_mode=True, divisor_override=5), (torch.randn(1, 2, 8, 7),),
                    emits=("AveragePool", "Mul"), name="divisor_ceil")],
)
def avg_pool2d(g, x, kernel_size, stride=(), padding=(0,), ceil_mode=False, count_include_pad=True, divisor_override=None):
    return _avg_pool(g, x, 2, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)


@exporter(
    "aten.avg_pool3d.default",
    samples=[Sample(nn.AvgPool3d(2), (_X3,), emits=("AveragePool",)),
             Sample(nn.AvgPool3d(3, 2, 1, ceil_mode=True, count_include_pad=False), (_X3,), emits=("AveragePool",),
                    name="ceil_exclude_pad")],
)
def avg_pool3d(g, x, kernel_size, stride=(), padding=(0,), ceil_mode=False, count_include_pad=True, divisor_override=None):
    return _avg_pool(g, x, 3, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)


# -- adaptive pooling ------------------------------------------------------------------------------
def _adaptive_sizes(g, x, nd, output_size):
    """(input sizes, output sizes) of the pooled dims; an output size None keeps the input's."""
    ins = list(x.shape)[-nd:]
    out = [output_size] * nd if isinstance(output_size, int) else list(output_size)
    out = [i if o is None else o for i, o in zip(ins, out)]
    if len(out) != nd or not all(isinstance(o, int) for o in out):
        raise g.error(f"adaptive pooling to a symbolic or mismatched output size {out}")
    return ins, out


def _adaptive_pool(g, x, nd, output_size, kind):
    """Global pooling for output size 1, a plain pool when the input divides evenly (static sizes)."""
    ins, out = _adaptive_sizes(g, x, nd, output_size)
    if all(o == 1 for o in out):
        return _batched(g, x, nd, lambda v: g.op(f"Global{kind}Pool", v)), ins, out
    if all(isinstance(i, int) for i in ins) and not any(i % o for i, o in zip(ins, out)):
        k = [i // o for i, o in zip(ins, out)]
        return _batched(g, x, nd, lambda v: g.op(f"{kind}Pool", v, kernel_shape=k, strides=k)), ins, out
    return None, ins, out


def _averaging(n, o):
    """(n, o): column i averages torch's adaptive window i, [floor(i n / o), ceil((i + 1) n / o))."""
    m = np.zeros((n, o), dtype=np.float64)
    for i in range(o):
        start, end = (i * n) // o, -(-((i + 1) * n) // o)
        m[start:end, i] = 1.0 / (end - start)
    return m


def _adaptive_avg(g, x, nd, output_size):
    """Adaptive average pooling; windows of unequal sizes (static input sizes) as MatMuls with
    averaging matrices, one per pooled dim, the outer ones over a reshape that flattens the inner."""
    y, ins, out = _adaptive_pool(g, x, nd, output_size, "Average")
    if y is not None:
        return y
    if not all(isinstance(i, int) for i in ins):
        raise g.error(f"adaptive_avg_pool from symbolic sizes {ins} to {out} (not global) is not supported")
    lead = g.rank(x) - nd
    y = x
    for axis in range(nd - 1, -1, -1):  # pooled dim ``axis``; the ones after it are already pooled
        if ins[axis] == out[axis]:
            continue
        a = _averaging(ins[axis], out[axis])
        if axis == nd - 1:
            y = g.op("MatMul", y, _const(g, a, x.dtype))
            continue
        inner = math.prod(out[axis + 1:])
        if axis < nd - 2:
            y = g.op("Reshape", y, g.const(np.asarray([0] * lead + [ins[axis], inner], dtype=np.int64)))
        y = g.op("MatMul", _const(g, a.T, x.dtype), y)
        if axis < nd - 2:
            y = g.op("Reshape", y, g.const(np.asarray([0] * lead + [out[axis], *out[axis + 1:]], dtype=np.int64)))
    return y


@exporter(
    "aten.adaptive_avg_pool1d.default",
    samples=[Sample(nn.AdaptiveAvgPool1d(1), (_X1,), emits=("GlobalAveragePool",), name="global"),
             Sample(nn.AdaptiveAvgPool1d(4), (torch.randn(2, 3, 12),), emits=("AveragePool",), name="even"),
             Sample(nn.AdaptiveAvgPool1d(4), (_X1,), emits=("MatMul",), name="uneven")],
)
def adaptive_avg_pool1d(g, x, output_size):
    return _adaptive_avg(g, x, 1, output_size)


@exporter(
    "aten._adaptive_avg_pool2d.default",
    samples=[Sample(lambda x: torch.ops.aten._adaptive_avg_pool2d(x, [2, 4]), (torch.randn(1, 3, 8, 8),),
                    emits=("AveragePool",), name="even"),
             Sample(lambda x: torch.ops.aten._adaptive_avg_pool2d(x, [3, 4]), (torch.randn(2, 3, 7, 9),),
                    emits=("MatMul",), name="uneven")],
)
def _adaptive_avg_pool2d(g, x, output_size):
    """The kernel under ``adaptive_avg_pool2d``, which the export keeps whole (decomposed, the
    (1, 1) case of a channels-last input becomes ``mean.dim`` plus an ``as_strided``)."""
    return _adaptive_avg(g, x, 2, output_size)


@exporter(
    "aten.adaptive_avg_pool2d.default",
    samples=[Sample(nn.AdaptiveAvgPool2d(1), (_X,), emits=("GlobalAveragePool",), name="global"),
             Sample(nn.AdaptiveAvgPool2d((3, 1)), (_X,), emits=("AveragePool",), name="even"),
             Sample(nn.AdaptiveAvgPool2d((4, None)), (torch.randn(2, 3, 7, 5),), emits=("MatMul",), name="uneven"),
             Sample(nn.AdaptiveAvgPool2d(3), (torch.randn(3, 5, 6),), emits=("MatMul",), name="unbatched")],
)
def adaptive_avg_pool2d(g, x, output_size):
    return _adaptive_avg(g, x, 2, output_size)


@exporter(
    "aten._adaptive_avg_pool3d.default",
    samples=[Sample(lambda x: torch.ops.aten._adaptive_avg_pool3d(x, [2, 3, 4]), (_X3,), emits=("MatMul",),
                    name="uneven")],
)
def _adaptive_avg_pool3d(g, x, output_size):
    return _adaptive_avg(g, x, 3, output_size)


@exporter(
    "aten.adaptive_avg_pool3d.default",
    samples=[Sample(nn.AdaptiveAvgPool3d(1), (_X3,), emits=("GlobalAveragePool",), name="global"),
             Sample(nn.AdaptiveAvgPool3d((5, 3, 7)), (_X3,), emits=("AveragePool",), name="even"),
             Sample(nn.AdaptiveAvgPool3d((2, 4, 3)), (_X3,), emits=("MatMul",), name="uneven")],
)
def adaptive_avg_pool3d(g, x, output_size):
    return _adaptive_avg(g, x, 3, output_size)


def _windows(n, o):
    """(o, longest window): row i lists torch's adaptive window i, [floor(i n / o), ceil((i + 1) n / o)),
    its shorter rows padded by repeating their last index (a repeat does not change a maximum)."""
    bounds = [((i * n) // o, -(-((i + 1) * n) // o)) for i in range(o)]
    width = max(end - start for start, end in bounds)
    return np.asarray([[min(start + r, end - 1) for r in range(width)] for start, end in bounds], dtype=np.int64)


def _adaptive_max_uneven(g, x, nd, ins, out):
    """Adaptive max pooling over windows of unequal sizes (static input sizes): per pooled dim, a
    Gather of the windows (``o x longest``) and a ReduceMax over the window axis."""
    if not all(isinstance(i, int) for i in ins):
        raise g.error(f"adaptive_max_pool from symbolic sizes {ins} to {out} (not global, not dividing) "
                      "is not supported: the windows depend on the input size")
    first = g.rank(x) - nd
    y = x
    for k in range(nd):
        if ins[k] == out[k]:
            continue
        axis = first + k
        y = g.op("Gather", y, g.const(_windows(ins[k], out[k])), axis=axis)  # (..., o, longest, ...)
        y = g.op("ReduceMax", y, g.const(np.asarray([axis + 1], dtype=np.int64)), keepdims=0)
    return y


def _adaptive_max_nd(nd):
    def prim(g, x, output_size):
        """Adaptive max pooling: global, evenly dividing (MaxPool) or uneven windows; the indices
        are not exported."""
        y, ins, out = _adaptive_pool(g, x, nd, output_size, "Max")
        if y is None:
            y = _adaptive_max_uneven(g, x, nd, ins, out)
        return _values_only(g, y)

    prim.__name__ = prim.__qualname__ = f"adaptive_max_pool{nd}d"
    prim.__module__ = __name__
    return prim


adaptive_max_pool1d = exporter(
    "aten.adaptive_max_pool1d.default",
    samples=[Sample(nn.AdaptiveMaxPool1d(1), (_X1,), emits=("GlobalMaxPool",), name="global"),
             Sample(nn.AdaptiveMaxPool1d(3), (torch.randn(2, 3, 12),), emits=("MaxPool",), name="even"),
             Sample(nn.AdaptiveMaxPool1d(4), (_X1,), emits=("Gather", "ReduceMax"), name="uneven")],
)(_adaptive_max_nd(1))

adaptive_max_pool2d = exporter(
    "aten.adaptive_max_pool2d.default",
    samples=[Sample(nn.AdaptiveMaxPool2d(1), (_X,), emits=("GlobalMaxPool",), name="global"),
             Sample(nn.AdaptiveMaxPool2d((3, None)), (_X,), emits=("MaxPool",), name="even"),
             Sample(nn.AdaptiveMaxPool2d((4, 5)), (torch.randn(2, 3, 7, 9),), emits=("Gather", "ReduceMax"), name="uneven"),
             Sample(nn.AdaptiveMaxPool2d(3), (torch.randn(3, 5, 7),), emits=("Gather", "ReduceMax"), name="unbatched")],
)(_adaptive_max_nd(2))

adaptive_max_pool3d = exporter(
    "aten.adaptive_max_pool3d.default",
    samples=[Sample(nn.AdaptiveMaxPool3d(1), (_X3,), emits=("GlobalMaxPool",), name="global"),
             Sample(nn.AdaptiveMaxPool3d((5, 2, 7)), (_X3,), emits=("MaxPool",), name="even"),
             Sample(nn.AdaptiveMaxPool3d((2, 4, 3)), (_X3,), emits=("Gather", "ReduceMax"), name="uneven")],
)(_adaptive_max_nd(3))
