"""Tensor creation: full, zeros, ones, new_full/new_zeros/new_ones, full_like/zeros_like/ones_like,
arange, scalar_tensor (-> ConstantOfShape / Expand, Range, Constant)."""

from __future__ import annotations

import numpy as np
import onnx_ir as ir
import torch

from onnxport import Sample, exporter

from .shape import shape_of

_X = torch.randn(2, 3)


def fill(g, shape, value):
    """A tensor of the traced result's dtype and the 1-D int64 ``shape``, filled with ``value``
    (a Python number, or a 0-d value for symbolic numbers)."""
    if isinstance(g.meta(), torch.Tensor) and g.meta().layout != torch.strided:
        raise g.error(f"creating a {g.meta().layout} tensor is not supported: ONNX tensors are dense")
    dt = g.out_dtype()
    if isinstance(value, ir.Value):
        return g.op("Expand", g.cast(value, dt), shape)
    if dt == ir.DataType.BFLOAT16:
        return g.cast(fill_typed(g, shape, value, ir.DataType.FLOAT), dt)
    return fill_typed(g, shape, value, dt)


def fill_typed(g, shape, value, dt):
    np_value = np.asarray([value], dtype=dt.numpy())
    return g.op("ConstantOfShape", shape, value=ir.tensor(np_value))


@exporter(
    "aten.full.default",
    samples=[Sample(lambda x: x + torch.full((x.shape[0], 3), 1.5), (_X,), emits=("ConstantOfShape",), name="full"),
             Sample(lambda x: x + torch.ones(x.shape[0], 3), (_X,), emits=("ConstantOfShape",), name="ones"),
             Sample(lambda x: x * torch.zeros(x.shape[0], 1, dtype=torch.int64), (_X,), emits=("ConstantOfShape",), name="int")],
)
def full(g, size, fill_value, *, dtype=None, layout=None, device=None, pin_memory=None):
    return fill(g, g.ints(list(size)), fill_value)


@exporter(
    "aten.zeros.default",
    samples=[Sample(lambda x: x + torch.zeros(x.shape[0], 3), (_X,), emits=("ConstantOfShape",)),
             Sample(lambda x: x * torch.zeros((), dtype=torch.int32), (_X,), emits=("Mul",), name="scalar")],
)
def zeros(g, size, *, dtype=None, layout=None, device=None, pin_memory=None):
    return fill(g, g.ints(list(size)), 0)


@exporter(
    "aten.ones.default",
    samples=[Sample(lambda x: x + torch.ones(x.shape[0], 3, dtype=torch.float16), (_X,), emits=("ConstantOfShape",))],
)
def ones(g, size, *, dtype=None, layout=None, device=None, pin_memory=None):
    return fill(g, g.ints(list(size)), 1)


@exporter(
    "aten.new_zeros.default",
    samples=[Sample(lambda x: x.new_zeros(x.shape[0], 2) + 1, (_X,), emits=("ConstantOfShape",))],
)
def new_zeros(g, x, size, *, dtype=None, layout=None, device=None, pin_memory=None):
    return fill(g, g.ints(list(size)), 0)


@exporter(
    "aten.new_ones.default",
    samples=[Sample(lambda x: x.new_ones((x.shape[0], 3), dtype=torch.bool) & (x > 0), (_X,), emits=("ConstantOfShape",))],
)
def new_ones(g, x, size, *, dtype=None, layout=None, device=None, pin_memory=None):
    return fill(g, g.ints(list(size)), 1)


@exporter("aten.new_full.default", samples=[Sample(lambda x: x.new_full((x.shape[0], 3), 7) - x, (_X,), emits=("ConstantOfShape",))])
def new_full(g, x, size, fill_value, *, dtype=None, layout=None, device=None, pin_memory=None):
    return fill(g, g.ints(list(size)), fill_value)


@exporter(
    "aten.zeros_like.default",
    samples=[Sample(lambda x: torch.zeros_like(x) + 1, (_X,), emits=("ConstantOfShape",)),
             Sample(lambda x: torch.zeros_like(x, dtype=torch.int64), (torch.randn(2, 3, 4),), emits=("ConstantOfShape",), name="dtype")],
)
def zeros_like(g, x, *, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
    return fill(g, shape_of(g, x), 0)


@exporter("aten.ones_like.default", samples=[Sample(lambda x: torch.ones_like(x) - x, (_X,), emits=("ConstantOfShape",))])
def ones_like(g, x, *, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
    return fill(g, shape_of(g, x), 1)


@exporter(
    "aten.full_like.default",
    samples=[Sample(lambda x: torch.full_like(x, 2.5) * x, (_X,), emits=("ConstantOfShape",)),
             Sample(lambda x: torch.full_like(x, 3, dtype=torch.int32), (_X,), emits=("ConstantOfShape",), name="dtype")],
)
def full_like(g, x, fill_value, *, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
    return fill(g, shape_of(g, x), fill_value)


@exporter(
    "aten.arange.start_step",
    samples=[Sample(lambda x: x + torch.arange(x.shape[0]).unsqueeze(1), (_X,), emits=("Range",), name="int"),
             Sample(lambda x: x * torch.arange(x.shape[0], dtype=torch.float32).unsqueeze(1), (_X,), emits=("Range",), name="float"),
             Sample(lambda x: torch.arange(x.shape[0] * 3).view(-1, 3) * x, (_X,), emits=("Range",), name="symbolic"),
             Sample(lambda x: x * torch.arange(1, x.shape[0] * 3, 3).unsqueeze(1), (torch.randn(4, 3),), emits=("Range",), name="step")],
)
@exporter(
    "aten.arange.default",
    samples=[Sample(lambda x: x + torch.arange(3.0), (_X,), emits=("Add",)),
             Sample(lambda x: x + torch.arange(x.shape[0]).unsqueeze(1), (_X,), emits=("Range",), name="symbolic")],
)
@exporter("aten.arange.start", samples=[Sample(lambda x: x[1:] * torch.arange(1, x.shape[0]).unsqueeze(1), (torch.randn(4, 3),), emits=("Range",))])
def arange(g, start, end=None, step=1, *, dtype=None, layout=None, device=None, pin_memory=None):
    if end is None:
        start, end = 0, start
    dt = g.out_dtype()
    return g.op("Range", g.scalar(start, dt), g.scalar(end, dt), g.scalar(step, dt))


@exporter("aten.scalar_tensor.default", samples=[Sample(lambda x: torch.where(x > 0, x, torch.scalar_tensor(-1.0)), (torch.randn(4),), emits=("Where",))])
def scalar_tensor(g, s, *, dtype=None, layout=None, device=None, pin_memory=None):
    return g.scalar(s, g.out_dtype())
