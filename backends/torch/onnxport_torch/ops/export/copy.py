"""Copies, conversions and aliases: _to_copy, to (dtype, dtype_layout, device), type_as (-> Cast); clone,
alias, contiguous (dropped)."""

from __future__ import annotations

import torch

from onnxport import Sample, exporter

_X = torch.randn(2, 3) * 5


def cast_to_result(g, x, layout=None):
    """``x`` as the traced result's dtype: a dtype change is a Cast; a device change (ONNX has no
    devices), ``copy``, ``non_blocking`` and ``memory_format`` are dropped."""
    if layout is not None and layout != torch.strided:
        raise g.error(f"conversion to layout {layout} is not supported: ONNX tensors are dense")
    return g.cast(x, g.out_dtype())


@exporter(
    "aten._to_copy.default",
    samples=[Sample(lambda x: x.to(torch.int32) * 2, (_X,), emits=("Cast",)),
             Sample(lambda x: x.double() + 1, (_X,), emits=("Cast",), name="double")],
)
def to_copy(g, x, *, dtype=None, layout=None, device=None, pin_memory=None, non_blocking=False, memory_format=None):
    return cast_to_result(g, x, layout)


@exporter(
    "aten.to.dtype",
    samples=[Sample(lambda x: x.to(torch.int32) * 2, (_X,), emits=("Cast",)),
             Sample(lambda x: x.half(), (_X,), emits=("Cast",), name="half"),
             Sample(lambda i: i.float() / 2, (torch.randint(0, 9, (2, 3)),), emits=("Cast",), name="float"),
             Sample(lambda x: x.to(torch.float32, copy=True) + 1, (_X,), emits=("Add",), name="same_copy")],
)
def to_dtype(g, x, dtype, non_blocking=False, copy=False, memory_format=None):
    return cast_to_result(g, x)


@exporter(
    "aten.to.dtype_layout",
    samples=[Sample(lambda x: torch.ops.aten.to.dtype_layout(x, dtype=torch.float64), (_X,), emits=("Cast",)),
             Sample(lambda x: x.to("cpu") + 1, (_X,), emits=("Add",), name="device")],
)
def to_dtype_layout(g, x, *, dtype=None, layout=None, device=None, pin_memory=None, non_blocking=False,
                    copy=False, memory_format=None):
    return cast_to_result(g, x, layout)


@exporter(
    "aten.to.device",
    samples=[Sample(lambda x: x.to("cpu", torch.int64), (_X,), emits=("Cast",)),
             Sample(lambda x, y: x.to(y), (_X, torch.randint(0, 9, (2, 3))), emits=("Cast",), name="other")],
)
def to_device(g, x, device, dtype, non_blocking=False, copy=False, memory_format=None):
    return cast_to_result(g, x)


@exporter("aten.type_as.default", samples=[Sample(lambda x, y: x.type_as(y), (_X, torch.randint(0, 9, (2, 3))), emits=("Cast",))])
def type_as(g, x, other):
    return cast_to_result(g, x)


@exporter(
    "aten.clone.default", "aten.alias.default",
    samples=[Sample(lambda x: x.clone().contiguous() + 1, (torch.randn(2, 3),), emits=("Add",))],
)
@exporter("aten.contiguous.default", samples=[Sample(lambda x: x.transpose(0, 1).contiguous() * 2, (torch.randn(2, 3),), emits=("Transpose",))])
def clone(g, x, *, memory_format=None):
    """Values are immutable in ONNX: the input is the result."""
    return x
