"""where, clamp (-> Where, Clip / Max / Min)."""

from __future__ import annotations

import onnx_ir as ir
import torch

from onnxport import Sample, exporter

_X = torch.randn(2, 3, 4)


@exporter(
    "aten.where.self",
    samples=[Sample(lambda x, y: torch.where(x > 0, x, y), (_X, torch.randn(3, 4)), emits=("Where",))],
)
def where(g, cond, a, b):
    dt = g.out_dtype()
    return g.op("Where", g.cast(cond, ir.DataType.BOOL), g.tensor(a, dt), g.tensor(b, dt))


@exporter(
    "aten.clamp.default", "aten.clamp.Tensor",
    samples=[Sample(lambda x: x.clamp(-0.5, 0.5), (_X,), emits=("Clip",), name="both"),
             Sample(lambda x: x.clamp(min=0.1), (_X,), emits=("Clip",), name="min"),
             Sample(lambda i: i.clamp(max=4), (torch.randint(0, 9, (3, 4)),), emits=("Clip",), name="int_max"),
             Sample(lambda x, lo: x.clamp(lo, lo + 1), (_X, torch.randn(4)), emits=("Max", "Min"), name="tensor")],
)
def clamp(g, x, min=None, max=None):  # noqa: A002 - the ATen names
    """Python bounds -> one Clip; tensor bounds (which broadcast) -> Max then Min."""
    dt = g.out_dtype()
    x = g.cast(x, dt)
    if isinstance(min, ir.Value) or isinstance(max, ir.Value):
        if min is not None:
            x = g.op("Max", x, g.tensor(min, dt))
        if max is not None:
            x = g.op("Min", x, g.tensor(max, dt))
        return x
    lo = g.scalar(min, dt) if min is not None else None
    hi = g.scalar(max, dt) if max is not None else None
    return g.op("Clip", x, lo, hi) if hi is not None else g.op("Clip", x, lo)
