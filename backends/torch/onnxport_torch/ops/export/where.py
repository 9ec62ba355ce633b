"""where, masked_fill, clamp, clamp_min, clamp_max (-> Where, Clip / Max / Min)."""

from __future__ import annotations

import onnx_ir as ir
import torch

from onnxport import Sample, exporter

_X = torch.randn(2, 3, 4)


@exporter(
    "aten.where.self",
    samples=[Sample(lambda x, y: torch.where(x > 0, x, y), (_X, torch.randn(3, 4)), emits=("Where",))],
)
@exporter(
    "aten.where.ScalarOther",
    samples=[Sample(lambda x: torch.where(x > 0, x, -1.5), (_X,), emits=("Where",)),
             Sample(lambda i: torch.where(i > 2, i, 0.5), (torch.randint(0, 5, (3, 4)),), emits=("Where", "Cast"), name="promote")],
)
@exporter("aten.where.ScalarSelf", samples=[Sample(lambda x: torch.where(x > 0, 2, x), (_X,), emits=("Where",))])
@exporter(
    "aten.where.Scalar",
    samples=[Sample(lambda x: torch.where(x > 0, 1.0, 0.0), (_X,), emits=("Where",)),
             Sample(lambda x: torch.where(x > 0, 3, -3), (_X,), emits=("Where",), name="int")],
)
def where(g, cond, a, b):
    """Both branches in the result type (Python numbers become constants of it)."""
    dt = g.out_dtype()
    return g.op("Where", g.cast(cond, ir.DataType.BOOL), g.tensor(a, dt), g.tensor(b, dt))


@exporter(
    "aten.masked_fill.Scalar",
    samples=[Sample(lambda x: x.masked_fill(x < 0, 0.0), (_X,), emits=("Where",)),
             Sample(lambda x, m: x.masked_fill(m, float("-inf")), (_X, torch.rand(3, 4) > 0.5), emits=("Where",), name="broadcast"),
             Sample(lambda i: i.masked_fill(i > 2, 7), (torch.randint(0, 5, (3, 4)),), emits=("Where",), name="int")],
)
@exporter(
    "aten.masked_fill.Tensor",
    samples=[Sample(lambda x, v: x.masked_fill(x > 0, v), (_X, torch.tensor(2.5, dtype=torch.float64)), emits=("Where",))],
)
def masked_fill(g, x, mask, value):
    """The value in ``x``'s type where ``mask`` holds."""
    dt = g.out_dtype()
    return g.op("Where", g.cast(mask, ir.DataType.BOOL), g.tensor(value, dt), g.cast(x, dt))


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


@exporter(
    "aten.clamp_min.default", "aten.clamp_min.Tensor",
    samples=[Sample(lambda x: x.clamp_min(0.1), (_X,), emits=("Clip",)),
             Sample(lambda x, lo: x.clamp_min(lo), (_X, torch.randn(4)), emits=("Max",), name="tensor")],
)
def clamp_min(g, x, min):  # noqa: A002 - the ATen name
    return clamp(g, x, min=min)


@exporter(
    "aten.clamp_max.default", "aten.clamp_max.Tensor",
    samples=[Sample(lambda x: x.clamp_max(0.1), (_X,), emits=("Clip",)),
             Sample(lambda i, hi: i.clamp_max(hi), (torch.randint(0, 9, (3, 4)), torch.randint(0, 9, (4,))), emits=("Min",), name="tensor")],
)
def clamp_max(g, x, max):  # noqa: A002 - the ATen name
    return clamp(g, x, max=max)
