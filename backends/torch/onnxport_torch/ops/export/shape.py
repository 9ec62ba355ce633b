"""View-like ops: view, reshape, view_as, flatten, unflatten, ravel, permute, transpose, t, swapaxes,
movedim, expand, expand_as, squeeze, unsqueeze (-> Reshape, Transpose, Expand, Squeeze, Unsqueeze)."""

from __future__ import annotations

import math

import numpy as np
import onnx_ir as ir
import torch

from onnxport import Sample, exporter

_X = torch.randn(2, 3, 4)


def sizes(g, x, axes=None):
    """The sizes of ``x`` along ``axes`` (all by default): ints where static, else 1-element
    int64 values sliced from one Shape node."""
    rank = g.rank(x)
    axes = range(rank) if axes is None else axes
    out, shape = [], None
    for a in axes:
        d = x.shape[a]
        if isinstance(d, int):
            out.append(d)
            continue
        if shape is None:
            shape = g.op("Shape", x)
        out.append(size1(g.op("Slice", shape, g.const(np.asarray([a], dtype=np.int64)), g.const(np.asarray([a + 1], dtype=np.int64)))))
    return out


def size1(v):
    """Mark a computed size as a 1-element int64 vector (so ``g.ints`` takes it as it is)."""
    v.dtype, v.shape = ir.DataType.INT64, ir.Shape([1])
    return v


def shape_of(g, x):
    """The shape of ``x`` as a 1-D int64 value (a constant when static)."""
    if x.shape is not None and all(isinstance(d, int) for d in x.shape):
        return g.const(np.asarray(list(x.shape), dtype=np.int64))
    return g.op("Shape", x)


def reshape(g, x, size, keep=0):
    """Static result shapes are written out; symbolic sizes are assembled with Concat.

    A size 0 means "copy the input's dim" to Reshape unless ``allowzero`` (opset 14) is set.
    The first ``keep`` sizes are the input's own dims: symbolic ones are written as such a 0
    when no size is an actual 0."""
    zero = any(isinstance(s, int) and s == 0 for s in size)
    if zero and g.opset < 14:
        raise g.error("a view to an empty dim needs Reshape's allowzero (opset 14)")
    if not zero:
        size = [0 if i < keep and not isinstance(s, int) else s for i, s in enumerate(size)]
    return g.op("Reshape", x, g.ints(list(size)), allowzero=1 if zero else None)


@exporter(
    "aten.view.default",
    samples=[Sample(lambda x: x.view(6, -1), (_X,), emits=("Reshape",)),
             Sample(lambda x: x.reshape(x.shape[0], -1, 2), (_X,), emits=("Reshape",), name="symbolic"),
             Sample(lambda x: x[:, :0].reshape(0, 4, 2) + 1, (torch.randn(4, 6, 2),), emits=("Reshape",), name="empty")],
)
@exporter(
    "aten.reshape.default",
    samples=[Sample(lambda x: x.transpose(0, 1).reshape(3, -1), (_X,), emits=("Reshape",)),
             Sample(lambda x: x.reshape(x.shape[0], 6, 2), (torch.randn(3, 4, 3),), emits=("Reshape",), name="symbolic")],
)
def view(g, x, size):
    return reshape(g, x, size)


@exporter("aten.view_as.default", samples=[Sample(lambda x, y: x.view_as(y) * y, (_X, torch.randn(2, 12)), emits=("Reshape",))])
def view_as(g, x, other):
    return g.op("Reshape", x, shape_of(g, other))


@exporter(
    "aten.flatten.using_ints",
    samples=[Sample(lambda x: x.flatten(1), (torch.randn(2, 3, 4, 5),), emits=("Reshape",)),
             Sample(lambda x: x.flatten(), (_X,), emits=("Reshape",), name="all"),
             Sample(lambda x: x.flatten(0, 1), (_X,), emits=("Reshape",), name="leading"),
             Sample(lambda x: x.flatten(-2, -1) + 1, (torch.randn(2, 0, 4),), emits=("Reshape",), name="empty")],
)
def flatten(g, x, start_dim=0, end_dim=-1):
    rank = g.rank(x)
    if rank == 0:
        return g.op("Reshape", x, g.const(np.asarray([1], dtype=np.int64)))
    s, e = g.axis(start_dim, rank), g.axis(end_dim, rank)
    if s > e:
        raise g.error(f"flatten: start_dim {start_dim} comes after end_dim {end_dim}")
    if s == e:
        return x
    dims = sizes(g, x)
    run = dims[s:e + 1]
    if all(isinstance(d, int) for d in run):
        merged = math.prod(run)
    elif not any(isinstance(d, int) and d == 0 for d in dims[:s] + dims[e + 1:]):
        merged = -1  # symbolic dims are nonzero (torch.export specializes 0 and 1)
    else:
        merged = size1(g.op("ReduceProd", g.op("Concat", *[g.ints([d]) for d in run], axis=0), keepdims=1))
    return reshape(g, x, dims[:s] + [merged] + dims[e + 1:], keep=s)


@exporter("aten.ravel.default", samples=[Sample(lambda x: x.ravel(), (_X,), emits=("Reshape",))])
def ravel(g, x):
    return g.op("Reshape", x, g.const(np.asarray([-1], dtype=np.int64)))


@exporter(
    "aten.unflatten.int",
    samples=[Sample(lambda x: x.unflatten(-1, (2, 2)), (_X,), emits=("Reshape",)),
             Sample(lambda x: x.unflatten(1, (-1, 1)), (_X,), emits=("Reshape",), name="infer"),
             Sample(lambda x: x.unflatten(0, (x.shape[0], 1)), (_X,), emits=("Reshape",), name="symbolic")],
)
def unflatten(g, x, dim, sizes_):
    rank = g.rank(x)
    axis = g.axis(dim, rank)
    dims = sizes(g, x)
    return reshape(g, x, dims[:axis] + list(sizes_) + dims[axis + 1:], keep=axis)


@exporter("aten.permute.default", samples=[Sample(lambda x: x.permute(2, 0, 1), (_X,), emits=("Transpose",)),
                                           Sample(lambda x: x.transpose(-1, -2), (_X,), emits=("Transpose",), name="transpose")])
def permute(g, x, dims):
    rank = g.rank(x)
    perm = [g.axis(d, rank) for d in dims]
    if perm == list(range(rank)):
        return x
    return g.op("Transpose", x, perm=perm)


def _swap(g, x, a, b):
    rank = g.rank(x)
    perm = list(range(rank))
    if rank:
        a, b = g.axis(a, rank), g.axis(b, rank)
        perm[a], perm[b] = perm[b], perm[a]
    return permute(g, x, perm)


@exporter(
    "aten.transpose.int",
    samples=[Sample(lambda x: x.transpose(1, 2), (_X,), emits=("Transpose",)),
             Sample(lambda x: x.transpose(-1, 0), (_X,), emits=("Transpose",), name="negative")],
)
@exporter("aten.swapaxes.default", samples=[Sample(lambda x: x.swapaxes(0, 2), (_X,), emits=("Transpose",))])
def transpose(g, x, dim0, dim1):
    return _swap(g, x, dim0, dim1)


@exporter("aten.t.default", samples=[Sample(lambda x: x.t(), (torch.randn(2, 3),), emits=("Transpose",)),
                                     Sample(lambda x: x.t() + 1, (torch.randn(3),), emits=("Add",), name="vector")])
def t(g, x):
    """Rank < 2 inputs are returned as they are."""
    return _swap(g, x, 0, 1) if g.rank(x) == 2 else x


@exporter(
    "aten.movedim.int",
    samples=[Sample(lambda x: x.movedim(0, -1), (_X,), emits=("Transpose",))],
)
@exporter(
    "aten.movedim.intlist",
    samples=[Sample(lambda x: x.movedim((0, 1), (2, 0)), (_X,), emits=("Transpose",))],
)
@exporter("aten.moveaxis.int", samples=[Sample(lambda x: x.moveaxis(2, 0), (_X,), emits=("Transpose",))])
def movedim(g, x, source, destination):
    rank = g.rank(x)
    src = [source] if isinstance(source, int) else list(source)
    dst = [destination] if isinstance(destination, int) else list(destination)
    if len(src) != len(dst):
        raise g.error("movedim: source and destination have different lengths")
    src, dst = [g.axis(d, rank) for d in src], [g.axis(d, rank) for d in dst]
    perm = [None] * rank
    for s, d in zip(src, dst):
        perm[d] = s
    rest = iter(a for a in range(rank) if a not in src)
    perm = [p if p is not None else next(rest) for p in perm]
    return permute(g, x, perm)


@exporter(
    "aten.expand.default",
    samples=[Sample(lambda x: x.expand(2, 3, 4), (torch.randn(3, 1),), emits=("Expand",)),
             Sample(lambda x: x[:, :1].expand(-1, 5, -1), (_X,), emits=("Expand",), name="keep_dims")],
)
def expand(g, x, size, implicit=False):
    """-1 keeps the input's size: written as 1, which Expand's broadcasting keeps too."""
    return g.op("Expand", x, g.ints([1 if (isinstance(s, int) and s == -1) else s for s in size]))


@exporter("aten.expand_as.default", samples=[Sample(lambda x, y: x.expand_as(y), (torch.randn(3, 1), _X), emits=("Expand",))])
def expand_as(g, x, other):
    return g.op("Expand", x, shape_of(g, other))


@exporter(
    "aten.squeeze.dims",
    samples=[Sample(lambda x: x.squeeze(1), (torch.randn(2, 1, 4),), emits=("Squeeze",)),
             Sample(lambda x: x.squeeze((0, 2)), (torch.randn(1, 3, 1),), emits=("Squeeze",), name="dims")],
)
@exporter(
    "aten.squeeze.dim",
    samples=[Sample(lambda x: x.squeeze(-2), (torch.randn(2, 1, 4),), emits=("Squeeze",)),
             Sample(lambda x: x.squeeze(0) + 1, (torch.randn(2, 1, 4),), emits=("Add",), name="not_one")],
)
@exporter("aten.squeeze.default", samples=[Sample(lambda x: x.squeeze(), (torch.randn(1, 3, 1, 4),), emits=("Squeeze",))])
def squeeze(g, x, dims=None):
    """Only size-1 dims are removed (torch ignores the others)."""
    rank = g.rank(x)
    if dims is None:
        dims = list(range(rank))
    elif isinstance(dims, int):
        dims = [dims]
    axes = [g.axis(d, rank) for d in dims]
    axes = sorted({a for a in axes if rank and x.shape[a] == 1})
    if rank == 0 or not axes:
        return x
    return g.op("Squeeze", x, g.const(np.asarray(axes, dtype=np.int64)))


@exporter("aten.unsqueeze.default", samples=[Sample(lambda x: x.unsqueeze(-1), (_X,), emits=("Unsqueeze",))])
def unsqueeze(g, x, dim):
    return g.op("Unsqueeze", x, g.const(np.asarray([g.axis(dim, g.rank(x) + 1)], dtype=np.int64)))
