"""View-like ops: view, permute, expand, squeeze, unsqueeze (-> Reshape, Transpose, Expand ...)."""

from __future__ import annotations

import numpy as np
import torch

from onnxport import Sample, exporter

_X = torch.randn(2, 3, 4)


@exporter(
    "aten.view.default",
    samples=[Sample(lambda x: x.view(6, -1), (_X,), emits=("Reshape",)),
             Sample(lambda x: x.reshape(x.shape[0], -1, 2), (_X,), emits=("Reshape",), name="symbolic"),
             Sample(lambda x: x[:, :0].reshape(0, 4, 2) + 1, (torch.randn(4, 6, 2),), emits=("Reshape",), name="empty")],
)
def view(g, x, size):
    """Static result shapes are written out; symbolic sizes are assembled with Concat.

    A size 0 means "copy the input's dim" to Reshape unless ``allowzero`` (opset 14) is set."""
    zero = any(isinstance(s, int) and s == 0 for s in size)
    if zero and g.opset < 14:
        raise g.error("a view to an empty dim needs Reshape's allowzero (opset 14)")
    return g.op("Reshape", x, g.ints(list(size)), allowzero=1 if zero else None)


@exporter("aten.permute.default", samples=[Sample(lambda x: x.permute(2, 0, 1), (_X,), emits=("Transpose",)),
                                           Sample(lambda x: x.transpose(-1, -2), (_X,), emits=("Transpose",), name="transpose")])
def permute(g, x, dims):
    rank = g.rank(x)
    return g.op("Transpose", x, perm=[g.axis(d, rank) for d in dims])


@exporter(
    "aten.expand.default",
    samples=[Sample(lambda x: x.expand(2, 3, 4), (torch.randn(3, 1),), emits=("Expand",)),
             Sample(lambda x: x[:, :1].expand(-1, 5, -1), (_X,), emits=("Expand",), name="keep_dims")],
)
def expand(g, x, size, implicit=False):
    """-1 keeps the input's size: written as 1, which Expand's broadcasting keeps too."""
    return g.op("Expand", x, g.ints([1 if (isinstance(s, int) and s == -1) else s for s in size]))


@exporter(
    "aten.squeeze.dims",
    samples=[Sample(lambda x: x.squeeze(1), (torch.randn(2, 1, 4),), emits=("Squeeze",)),
             Sample(lambda x: x.squeeze((0, 2)), (torch.randn(1, 3, 1),), emits=("Squeeze",), name="dims")],
)
def squeeze(g, x, dims=None):
    """Only size-1 dims are removed (torch ignores the others)."""
    rank = g.rank(x)
    if dims is None:
        dims = list(range(rank))
    elif isinstance(dims, int):
        dims = [dims]
    axes = [g.axis(d, rank) for d in dims]
    axes = [a for a in axes if rank and x.shape[a] == 1]
    if rank == 0 or not axes:
        return x
    return g.op("Squeeze", x, g.const(np.asarray(axes, dtype=np.int64)))


@exporter("aten.unsqueeze.default", samples=[Sample(lambda x: x.unsqueeze(-1), (_X,), emits=("Unsqueeze",))])
def unsqueeze(g, x, dim):
    return g.op("Unsqueeze", x, g.const(np.asarray([g.axis(dim, g.rank(x) + 1)], dtype=np.int64)))
