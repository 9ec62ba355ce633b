"""sort, argsort (-> TopK over the whole axis)."""

from __future__ import annotations

import numpy as np
import onnx_ir as ir
import torch

from onnxport import Sample, exporter

from .shape import sizes

_X = torch.randn(2, 5, 3)


def _sort(g, x, dim, descending):
    """TopK with k = the axis size; among equal values the lower index comes first in both
    orders, so the result is also torch's stable sort."""
    rank = g.rank(x)
    if rank == 0:
        return g.op("Identity", x), g.const(np.asarray(0, dtype=np.int64))
    axis = g.axis(dim, rank)
    boolean = x.dtype == ir.DataType.BOOL
    y = g.cast(x, ir.DataType.UINT8) if boolean else x
    values, indices = g.op("TopK", y, g.ints(sizes(g, x, [axis])), axis=axis, largest=int(bool(descending)),
                           sorted=1, outputs=2)
    return (g.op("Cast", values, to=ir.DataType.BOOL) if boolean else values), indices


@exporter(
    "aten.sort.default",
    samples=[Sample(lambda x: x.sort(1), (_X,), emits=("TopK",)),
             Sample(lambda x: x.sort(-1, descending=True), (_X,), emits=("TopK",), name="descending"),
             Sample(lambda x: x.sort(0), (_X,), emits=("TopK",), name="symbolic")],
)
def sort(g, x, dim=-1, descending=False):
    return _sort(g, x, dim, descending)


@exporter(
    "aten.sort.stable",
    samples=[Sample(lambda x: x.sort(stable=True, dim=1, descending=True), (torch.randint(0, 3, (2, 6)).float(),), emits=("TopK",))],
)
def sort_stable(g, x, *, stable=None, dim=-1, descending=False):
    return _sort(g, x, dim, descending)


@exporter("aten.argsort.default", samples=[Sample(lambda x: x.argsort(1), (_X,), emits=("TopK",))])
def argsort(g, x, dim=-1, descending=False):
    return _sort(g, x, dim, descending)[1]


@exporter(
    "aten.argsort.stable",
    samples=[Sample(lambda x: x.argsort(stable=True, descending=True), (torch.randint(0, 3, (2, 6)),), emits=("TopK",))],
)
def argsort_stable(g, x, *, stable=False, dim=-1, descending=False):
    return _sort(g, x, dim, descending)[1]
