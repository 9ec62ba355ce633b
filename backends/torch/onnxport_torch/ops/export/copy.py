"""Copies and aliases: _to_copy (-> Cast), clone, alias, detach, lift_fresh_copy (dropped)."""

from __future__ import annotations

import torch

from onnxport import Sample, exporter


@exporter(
    "aten._to_copy.default",
    samples=[Sample(lambda x: x.to(torch.int32) * 2, (torch.randn(2, 3) * 5,), emits=("Cast",)),
             Sample(lambda x: x.double() + 1, (torch.randn(2, 3),), emits=("Cast",), name="double")],
)
def to_copy(g, x, *, dtype=None, layout=None, device=None, pin_memory=None, non_blocking=False, memory_format=None):
    """A dtype change is a Cast; a device or layout change alone is dropped."""
    return g.cast(x, g.out_dtype())


@exporter(
    "aten.clone.default", "aten.alias.default",
    samples=[Sample(lambda x: x.clone().contiguous() + 1, (torch.randn(2, 3),), emits=("Add",))],
)
def clone(g, x, *, memory_format=None):
    """Values are immutable in ONNX: the input is the result."""
    return x
