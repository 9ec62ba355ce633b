"""Symbolic sizes: sym_size and the Python arithmetic on them (0-d int64 values in ONNX).

These ops only appear with ``dynamic_shapes``; the tests export each sample with a dynamic
batch dim as well, which is where these samples take effect.
"""

from __future__ import annotations

import numpy as np
import onnx_ir as ir
import torch

from onnxport import Sample, exporter

_X = torch.randn(4, 6)


@exporter("aten.sym_size.int", samples=[Sample(lambda x: x.view(x.shape[0], 3, 2), (_X,), emits=("Shape",))])
def sym_size(g, x, dim):
    shape = g.op("Shape", x)
    return g.op("Gather", shape, g.const(np.asarray(g.axis(dim, g.rank(x)), dtype=np.int64)), axis=0)


def _int(g, v):
    if isinstance(v, ir.Value):
        return g.cast(v, ir.DataType.INT64)
    return g.const(np.asarray(int(v), dtype=np.int64))


def _arith(onnx_op: str, doc: str):
    def prim(g, a, b):
        return g.op(onnx_op, _int(g, a), _int(g, b))

    prim.__doc__ = doc
    return prim


mul = exporter("operator.mul", samples=[Sample(lambda x: x.reshape(x.shape[0] * 6), (_X,), emits=("Mul",))])(
    _arith("Mul", "Product of sizes."))
add = exporter("operator.add", samples=[Sample(lambda x: torch.zeros(x.shape[0] + 1, 2) + 1, (_X,), emits=("Add",))])(
    _arith("Add", "Sum of sizes."))
sub = exporter("operator.sub", samples=[Sample(lambda x: torch.ones(x.shape[0] - 1, 2), (_X,), emits=("Sub",))])(
    _arith("Sub", "Difference of sizes."))
floordiv = exporter("operator.floordiv", samples=[Sample(lambda x: torch.ones(x.shape[0] // 2 + 1), (_X,), emits=("Div",))])(
    _arith("Div", "Floor division of non-negative sizes (ONNX Div truncates)."))
