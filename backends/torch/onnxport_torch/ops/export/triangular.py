"""tril, triu -> Trilu (opset 14), a Range-built mask with Where before."""

from __future__ import annotations

import numpy as np
import onnx_ir as ir
import torch

from onnxport import Sample, exporter

from .shape import sizes

_M = torch.randn(2, 4, 5)


def _triangle(g, x, diagonal, upper):
    if g.rank(x) < 2:
        raise g.error("tril/triu need a tensor of at least 2 dims")
    if g.opset >= 14:
        return g.op("Trilu", x, g.const(np.asarray(diagonal, dtype=np.int64)), upper=int(upper))
    rank = g.rank(x)
    zero, one = g.const(np.asarray(0, dtype=np.int64)), g.const(np.asarray(1, dtype=np.int64))
    n_rows, n_cols = (g.op("Squeeze", g.ints([s]), g.const(np.asarray([0], dtype=np.int64))) for s in sizes(g, x, [rank - 2, rank - 1]))
    rows = g.op("Unsqueeze", g.op("Range", zero, n_rows, one), g.const(np.asarray([1], dtype=np.int64)))
    cols = g.op("Range", zero, n_cols, one)
    offset = g.op("Sub", cols, rows)  # j - i
    k = g.const(np.asarray(diagonal, dtype=np.int64))
    keep = g.op("GreaterOrEqual", offset, k) if upper else g.op("LessOrEqual", offset, k)
    if x.dtype == ir.DataType.BOOL:
        return g.op("And", x, keep)
    return g.op("Where", keep, x, g.scalar(0, x.dtype))


@exporter(
    "aten.tril.default",
    samples=[Sample(lambda x: x.tril(), (_M,), emits=("Trilu",)),
             Sample(lambda x: x.tril(-1), (torch.randn(5, 3),), emits=("Trilu",), name="below"),
             Sample(lambda b: b.tril(2), (torch.rand(3, 6) > 0.3,), emits=("Trilu",), name="bool")],
)
def tril(g, x, diagonal=0):
    return _triangle(g, x, diagonal, upper=False)


@exporter(
    "aten.triu.default",
    samples=[Sample(lambda x: x.triu(), (_M,), emits=("Trilu",)),
             Sample(lambda x: x.triu(1), (torch.randn(5, 3),), emits=("Trilu",), name="above"),
             Sample(lambda i: i.triu(-2), (torch.randint(0, 9, (4, 4)),), emits=("Trilu",), name="int")],
)
def triu(g, x, diagonal=0):
    return _triangle(g, x, diagonal, upper=True)
