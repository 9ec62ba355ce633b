"""Tensor creation: full, arange, scalar_tensor (-> ConstantOfShape / Expand, Range, Constant)."""

from __future__ import annotations

import numpy as np
import onnx_ir as ir
import torch

from onnxport import Sample, exporter


@exporter(
    "aten.full.default",
    samples=[Sample(lambda x: x + torch.full((x.shape[0], 3), 1.5), (torch.randn(2, 3),), emits=("ConstantOfShape",), name="full"),
             Sample(lambda x: x + torch.ones(x.shape[0], 3), (torch.randn(2, 3),), emits=("ConstantOfShape",), name="ones"),
             Sample(lambda x: x * torch.zeros(x.shape[0], 1, dtype=torch.int64), (torch.randn(2, 3),), emits=("ConstantOfShape",), name="int")],
)
def full(g, size, fill_value, *, dtype=None, layout=None, device=None, pin_memory=None):
    dt = g.out_dtype()
    if isinstance(fill_value, ir.Value):
        return g.op("Expand", g.cast(fill_value, dt), g.ints(list(size)))
    np_value = np.asarray([fill_value], dtype=dt.numpy())
    return g.op("ConstantOfShape", g.ints(list(size)), value=ir.tensor(np_value))


@exporter(
    "aten.arange.start_step",
    samples=[Sample(lambda x: x + torch.arange(x.shape[0]).unsqueeze(1), (torch.randn(2, 3),), emits=("Range",), name="int"),
             Sample(lambda x: x * torch.arange(x.shape[0], dtype=torch.float32).unsqueeze(1), (torch.randn(2, 3),), emits=("Range",), name="float"),
             Sample(lambda x: torch.arange(x.shape[0] * 3).view(-1, 3) * x, (torch.randn(2, 3),), emits=("Range",), name="symbolic")],
)
def arange(g, start, end=None, step=1, *, dtype=None, layout=None, device=None, pin_memory=None):
    if end is None:
        start, end = 0, start
    dt = g.out_dtype()
    return g.op("Range", g.scalar(start, dt), g.scalar(end, dt), g.scalar(step, dt))


@exporter("aten.scalar_tensor.default", samples=[Sample(lambda x: torch.where(x > 0, x, torch.scalar_tensor(-1.0)), (torch.randn(4),), emits=("Where",))])
def scalar_tensor(g, s, *, dtype=None, layout=None, device=None, pin_memory=None):
    return g.scalar(s, g.out_dtype())


