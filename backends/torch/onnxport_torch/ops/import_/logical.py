"""Boolean logic (Not, And, Or, Xor) and the comparisons (Equal, Greater, Less, ...)."""

from __future__ import annotations

import torch

from onnxport import importer

from ...context import NodeContext
from ._numeric import ordered

_LOGIC = {"And": torch.logical_and, "Or": torch.logical_or, "Xor": torch.logical_xor}
_COMPARE = {
    "Equal": torch.eq, "Greater": torch.gt, "GreaterOrEqual": torch.ge,
    "Less": torch.lt, "LessOrEqual": torch.le,
}


@importer("Not", since=1)
def not_(ctx: NodeContext, x: torch.Tensor) -> torch.Tensor:
    """Logical negation of a bool tensor."""
    return torch.logical_not(x)


@importer("And", since=7)
@importer("Or", since=7)
@importer("Xor", since=7)
def logic(ctx: NodeContext, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Element-wise logical and / or / xor of bool tensors (broadcasting)."""
    return _LOGIC[ctx.op_type](a, b)


@importer("Equal", since=19)
@importer("Greater", since=13)
@importer("GreaterOrEqual", since=16)
@importer("Less", since=13)
@importer("LessOrEqual", since=16)
def compare(ctx: NodeContext, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Element-wise comparison, a bool tensor (unsigned 16/32/64-bit compared exactly)."""
    return _COMPARE[ctx.op_type](ordered(a), ordered(b))
