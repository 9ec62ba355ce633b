"""softmax / log_softmax (and the core _softmax / _log_softmax) -> Softmax / LogSoftmax."""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from onnxport import Sample, exporter

_X = torch.randn(2, 5, 3)


def _softmax(g, op, x, dim):
    """In the result's dtype: ``dtype`` (softmax.int) or ``half_to_float`` (_softmax) cast the
    input first, as torch does. A 0-d input is treated as one element."""
    x = g.cast(x, g.out_dtype())
    rank = g.rank(x)
    if rank == 0:
        one = g.const(np.asarray([1], dtype=np.int64))
        y = g.op(op, g.op("Reshape", x, one), axis=0)
        return g.op("Reshape", y, g.const(np.zeros(0, dtype=np.int64)))
    return g.op(op, x, axis=g.axis(int(dim), rank))


@exporter("aten._softmax.default", samples=[Sample(nn.Softmax(dim=1), (_X,), emits=("Softmax",))])
@exporter(
    "aten.softmax.int",
    samples=[Sample(nn.Softmax(dim=-1), (_X,), emits=("Softmax",)),
             Sample(lambda x: x.softmax(1, dtype=torch.float64), (_X,), emits=("Softmax", "Cast"), name="dtype")],
)
def softmax(g, x, dim, *dtype_or_half_to_float):
    return _softmax(g, "Softmax", x, dim)


@exporter("aten._log_softmax.default", samples=[Sample(nn.LogSoftmax(dim=-1), (torch.randn(2, 5),), emits=("LogSoftmax",))])
@exporter(
    "aten.log_softmax.int",
    samples=[Sample(nn.LogSoftmax(dim=1), (_X,), emits=("LogSoftmax",)),
             Sample(lambda x: x.log_softmax(0, dtype=torch.float64), (_X,), emits=("LogSoftmax", "Cast"), name="dtype")],
)
def log_softmax(g, x, dim, *dtype_or_half_to_float):
    return _softmax(g, "LogSoftmax", x, dim)
