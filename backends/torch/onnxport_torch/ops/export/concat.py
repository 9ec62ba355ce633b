"""cat, split, split_with_sizes, stack (-> Concat, Split)."""

from __future__ import annotations

import numpy as np
import torch

from onnxport import Sample, exporter

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
    "aten.split_with_sizes.default", "aten.split.Tensor",
    samples=[Sample(lambda x: torch.split(x, [1, 2, 3], 1), (_X,), emits=("Split",), name="sizes"),
             Sample(lambda x: x.chunk(3, -1)[1] * 2, (torch.randn(2, 9),), emits=("Split",), name="chunk")],
)
def split(g, x, split_sizes, dim=0):
    """Split with the sizes as input; an int split size is expanded from the traced results."""
    axis = g.axis(dim, g.rank(x))
    if isinstance(split_sizes, int):
        split_sizes = [v.shape[axis] for v in g.meta()]
    if not all(isinstance(s, int) for s in split_sizes):
        sizes = g.ints(list(split_sizes))
    else:
        sizes = g.const(np.asarray(split_sizes, dtype=np.int64))
    outs = g.op("Split", x, sizes, axis=axis, outputs=len(split_sizes))
    return outs if isinstance(outs, tuple) else (outs,)
