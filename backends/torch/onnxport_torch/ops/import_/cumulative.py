"""Running sums and products along an axis: CumSum and CumProd."""

from __future__ import annotations

import torch

from onnxport import importer

from ...context import NodeContext, ints
from ._numeric import WIDE_UNSIGNED, carrier, restore


@importer("CumSum", since=14)
@importer("CumProd", since=26)
def cumulative(ctx: NodeContext, x: torch.Tensor, axis: torch.Tensor, *, exclusive: int, reverse: int) -> torch.Tensor:
    """Inclusive (or ``exclusive``) running sum/product along ``axis``, optionally from the end."""
    found = ints(ctx, 1, axis)
    if not found or len(found) != 1:
        raise ctx.error(f"axis must hold exactly one value, got {found}")
    rank = max(x.dim(), 1)
    if not -rank <= found[0] < rank:
        raise ctx.error(f"axis {found[0]} is out of range for a rank-{x.dim()} input")
    dim = found[0] % rank
    dtype = x.dtype
    y = carrier(x).reshape(1) if x.dim() == 0 else carrier(x)
    if reverse:
        y = torch.flip(y, [dim])
    if exclusive and y.shape[dim] > 0:
        # shift by one along the axis, starting from the identity element
        first = torch.full_like(y.narrow(dim, 0, 1), 0 if ctx.op_type == "CumSum" else 1)
        y = torch.cat([first, y.narrow(dim, 0, y.shape[dim] - 1)], dim)
    fn = torch.cumsum if ctx.op_type == "CumSum" else torch.cumprod
    y = fn(y, dim, dtype=y.dtype)
    if reverse:
        y = torch.flip(y, [dim])
    y = y.reshape(x.shape)
    return restore(y, dtype) if dtype in WIDE_UNSIGNED else y
