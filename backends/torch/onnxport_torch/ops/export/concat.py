"""cat, stack, split, split_with_sizes, chunk, unbind (-> Concat, Unsqueeze, Split, Squeeze)."""

from __future__ import annotations

import numpy as np
import torch

from onnxport import Sample, exporter

from .shape import size1, sizes

_X = torch.randn(2, 6, 4)


@exporter(
    "aten.cat.default",
    samples=[Sample(lambda a, b: torch.cat([a, b], 1), (_X, torch.randn(2, 3, 4)), emits=("Concat",)),
             Sample(lambda a, b: torch.cat([a, b.long()], -1), (_X, torch.ones(2, 6, 1)), emits=("Concat", "Cast"), name="mixed")],
)
def cat(g, tensors, dim=0):
    """Inputs cast to the result type; legacy empty 1-D inputs are skipped."""
    dt = g.out_dtype()
    rank = g.out_rank()
    parts = [g.cast(t, dt) for t in tensors if not (t.shape is not None and list(t.shape) == [0] and rank != 1)]
    if len(parts) == 1:
        return g.op("Identity", parts[0])
    return g.op("Concat", *parts, axis=g.axis(dim, rank))


@exporter(
    "aten.stack.default",
    samples=[Sample(lambda a, b: torch.stack([a, b]), (_X, _X), emits=("Unsqueeze", "Concat")),
             Sample(lambda a, b: torch.stack((a, b.long()), -1), (_X, _X), emits=("Concat", "Cast"), name="mixed"),
             Sample(lambda a: torch.stack([a], 1), (_X,), emits=("Unsqueeze",), name="one")],
)
def stack(g, tensors, dim=0):
    """Each input (in the result type) gets the new dim, then Concat."""
    dt = g.out_dtype()
    axis = g.axis(dim, g.out_rank())
    axes = g.const(np.asarray([axis], dtype=np.int64))
    parts = [g.op("Unsqueeze", g.cast(t, dt), axes) for t in tensors]
    return parts[0] if len(parts) == 1 else g.op("Concat", *parts, axis=axis)


def _split(g, x, axis, lengths):
    """Split along ``axis`` into pieces of ``lengths`` (ints or 1-element int64 values)."""
    if len(lengths) == 1:
        return (g.op("Identity", x),)
    outs = g.op("Split", x, g.ints(list(lengths)), axis=axis, outputs=len(lengths))
    return outs if isinstance(outs, tuple) else (outs,)


def _pieces(g, x, axis, count, size=None, chunks=None):
    """``count`` pieces along ``axis`` of ``size`` (else ceil(n / ``chunks``)), the last one what
    remains: ints where the dim is static, else computed from its runtime size."""
    (n,) = sizes(g, x, [axis])
    if isinstance(n, int):
        size = -(-n // chunks) if size is None else size
        return [size] * (count - 1) + [n - size * (count - 1)]
    if size is None:
        size = size1(g.op("Div", g.op("Add", n, g.ints([chunks - 1])), g.ints([chunks])))
        used = g.op("Mul", size, g.ints([count - 1]))
    else:
        used = g.ints([size * (count - 1)])
    return [size] * (count - 1) + [size1(g.op("Sub", n, used))]


@exporter(
    "aten.split_with_sizes.default", "aten.split.Tensor",
    samples=[Sample(lambda x: torch.split(x, [1, 2, 3], 1), (_X,), emits=("Split",), name="sizes"),
             Sample(lambda x: x.split(3, -1)[1] * 2, (torch.randn(2, 9),), emits=("Split",), name="int"),
             Sample(lambda x: x.split(2, 0), (torch.randn(5, 3),), emits=("Split",), name="symbolic")],
)
def split(g, x, split_sizes, dim=0):
    """Split with the sizes as input; an int split size gives equal pieces and a smaller last one."""
    axis = g.axis(dim, g.rank(x))
    if isinstance(split_sizes, int):
        split_sizes = _pieces(g, x, axis, len(g.meta()), size=split_sizes)
    return _split(g, x, axis, split_sizes)


@exporter(
    "aten.chunk.default",
    samples=[Sample(lambda x: x.chunk(3, 1), (_X,), emits=("Split",)),
             Sample(lambda x: x.chunk(4, -1), (torch.randn(2, 7),), emits=("Split",), name="uneven"),
             Sample(lambda x: x.chunk(2), (torch.randn(6, 3),), emits=("Split",), name="symbolic")],
)
def chunk(g, x, chunks, dim=0):
    """torch's pieces: ceil(n / chunks) each (so maybe fewer than ``chunks``), the last smaller."""
    axis = g.axis(dim, g.rank(x))
    return _split(g, x, axis, _pieces(g, x, axis, len(g.meta()), chunks=chunks))


@exporter(
    "aten.unbind.int",
    samples=[Sample(lambda x: x.unbind(1), (_X,), emits=("Split", "Squeeze")),
             Sample(lambda x: x.unbind(-1)[0], (torch.randn(2, 1),), emits=("Squeeze",), name="one")],
)
def unbind(g, x, dim=0):
    """One piece per index of ``dim`` (a static size), each without ``dim``."""
    axis = g.axis(dim, g.rank(x))
    count = len(g.meta())
    axes = g.const(np.asarray([axis], dtype=np.int64))
    if count == 1:
        return (g.op("Squeeze", x, axes),)
    pieces = g.op("Split", x, g.const(np.ones(count, dtype=np.int64)), axis=axis, outputs=count)
    return tuple(g.op("Squeeze", p, axes) for p in pieces)
