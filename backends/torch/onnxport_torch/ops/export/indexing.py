"""Indexing: slice, narrow, select, index, index_select, embedding, gather, scatter (-> Slice, Gather ...)."""

from __future__ import annotations

import numpy as np
import onnx_ir as ir
import torch
from torch import nn

from onnxport import Sample, exporter

from .shape import size1

_X = torch.randn(3, 5, 4)
_INT64_MAX = 2**63 - 1


@exporter(
    "aten.slice.Tensor",
    samples=[Sample(lambda x: x[:, 1:4], (_X,), emits=("Slice",)),
             Sample(lambda x: x[..., ::2], (_X,), emits=("Slice",), name="step"),
             Sample(lambda x: x[:, -3:-1], (_X,), emits=("Slice",), name="negative")],
)
def slice(g, x, dim=0, start=None, end=None, step=1):  # noqa: A001 - the ATen name
    start = 0 if start is None else start
    end = _INT64_MAX if end is None else end
    if isinstance(start, int) and start == 0 and isinstance(end, int) and end >= _INT64_MAX and step == 1:
        return x
    axis = g.axis(dim, g.rank(x))
    return g.op("Slice", x, g.ints([start]), g.ints([end]),
                g.const(np.asarray([axis], dtype=np.int64)), g.ints([step]))


@exporter(
    "aten.narrow.default",
    samples=[Sample(lambda x: x.narrow(1, 1, 3), (_X,), emits=("Slice",)),
             Sample(lambda x: x.narrow(-1, -2, 2), (_X,), emits=("Slice",), name="negative_start"),
             Sample(lambda x: x.narrow(0, 1, x.shape[0] - 1), (_X,), emits=("Slice",), name="symbolic")],
)
def narrow(g, x, dim, start, length):
    """x[start:start + length] along ``dim``; a negative start counts from the end."""
    if isinstance(start, int) and isinstance(length, int):
        end = start + length
        if start < 0 <= end:
            end = _INT64_MAX  # a negative start whose piece reaches the end
    else:
        end = size1(g.op("Add", g.ints([start]), g.ints([length])))
    return slice(g, x, dim, start, end)


@exporter("aten.select.int", samples=[Sample(lambda x: x[:, 2], (_X,), emits=("Gather",)),
                                      Sample(lambda x: x[-1], (_X,), emits=("Gather",), name="negative")])
def select(g, x, dim, index):
    """A scalar index removes the dim, as Gather with a 0-d index does."""
    idx = index if isinstance(index, ir.Value) else g.const(np.asarray(index, dtype=np.int64))
    return g.op("Gather", x, idx, axis=g.axis(dim, g.rank(x)))


@exporter(
    "aten.index.Tensor",
    samples=[Sample(lambda x, i: x[:, i], (_X, torch.tensor([[0, 4], [2, 2]])), emits=("Gather",), name="one"),
             Sample(lambda x, i, j: x[i, j], (_X, torch.tensor([0, 2, 1]), torch.tensor([4, -1, 0])),
                    emits=("GatherND",), name="leading")],
)
def index(g, x, indices):
    """One index tensor -> Gather; index tensors on the leading dims -> GatherND."""
    present = [i for i, t in enumerate(indices) if t is not None]
    for i in present:
        if indices[i].dtype == ir.DataType.BOOL:
            raise g.error("boolean mask indexing has a data-dependent shape and cannot be exported")
    if len(present) == 1:
        return g.op("Gather", x, indices[present[0]], axis=present[0])
    if present != list(range(len(present))):
        raise g.error("advanced indexing with index tensors that are not on the leading dims is not supported")
    idx = [g.cast(indices[i], ir.DataType.INT64) for i in present]
    shape = g.op("Shape", idx[0])
    for t in idx[1:]:  # broadcast the index tensors to one shape
        shape = g.op("Shape", g.op("Add", g.op("Expand", idx[0], shape), t))
    stacked = g.op("Concat", *[g.op("Unsqueeze", g.op("Expand", t, shape), g.const(np.asarray([-1], dtype=np.int64))) for t in idx], axis=-1)
    return g.op("GatherND", x, stacked)


@exporter("aten.index_select.default", samples=[Sample(lambda x, i: x.index_select(1, i), (_X, torch.tensor([4, 0, 0])), emits=("Gather",))])
def index_select(g, x, dim, index):
    return g.op("Gather", x, index, axis=g.axis(dim, g.rank(x)))


@exporter("aten.embedding.default", samples=[Sample(nn.Embedding(10, 4), (torch.tensor([[1, 9, 0], [3, 3, 2]]),), emits=("Gather",))])
def embedding(g, weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    return g.op("Gather", weight, indices, axis=0)


@exporter("aten.gather.default", samples=[Sample(lambda x, i: torch.gather(x, 1, i), (_X, torch.randint(0, 5, (3, 2, 4))), emits=("GatherElements",))])
def gather(g, x, dim, index, *, sparse_grad=False):
    return g.op("GatherElements", x, index, axis=g.axis(dim, g.rank(x)))


_SCATTER_IDX = torch.tensor([[0, 1, 2, 0], [1, 2, 0, 1]])


@exporter(
    "aten.scatter.src", "aten.scatter.value", "aten.scatter_add.default", "aten.scatter_reduce.two",
    samples=[Sample(lambda x, s: x.scatter(0, _SCATTER_IDX, s), (torch.zeros(3, 4), torch.randn(2, 4)), emits=("ScatterElements",), name="src"),
             Sample(lambda x: x.scatter(1, _SCATTER_IDX[:, :2], 2.5), (torch.zeros(2, 5),), emits=("ScatterElements",), name="value"),
             Sample(lambda x, s: x.scatter_add(0, _SCATTER_IDX, s), (torch.zeros(3, 4), torch.randn(2, 4)), emits=("ScatterElements",), name="add"),
             Sample(lambda x, s: x.scatter_reduce(0, _SCATTER_IDX, s, "amax"), (torch.zeros(3, 4), torch.randn(2, 4)), emits=("ScatterElements",), name="amax")],
)
def scatter(g, x, dim, index, src, reduce=None, *, include_self=True):
    """ScatterElements; add (opset 16), amax/amin (18) and prod as its reduction."""
    name = g.fx.target.__name__
    axis = g.axis(dim, g.rank(x))
    if not isinstance(src, ir.Value):
        src = g.op("Expand", g.scalar(src, x.dtype), g.op("Shape", index))
    elif src.shape is None or index.shape is None or list(src.shape) != list(index.shape):
        # torch reads only the index-shaped corner of src; ONNX wants equal shapes
        rank = g.rank(index)
        src = g.op("Slice", src, g.const(np.zeros(rank, dtype=np.int64)), g.op("Shape", index),
                   g.const(np.arange(rank, dtype=np.int64)))
    reduction = "none"
    if name.startswith("scatter_add"):
        reduction = "add"
    elif name.startswith("scatter_reduce"):
        if not include_self:
            raise g.error("scatter_reduce with include_self=False is not supported")
        table = {"sum": "add", "prod": "mul", "amax": "max", "amin": "min"}
        if reduce not in table:
            raise g.error(f"scatter_reduce {reduce!r} has no ONNX reduction")
        reduction = table[reduce]
    if reduction == "none":
        return g.op("ScatterElements", x, index, src, axis=axis)
    return g.op("ScatterElements", x, index, src, axis=axis, reduction=reduction)
