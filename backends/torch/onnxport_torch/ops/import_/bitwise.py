"""Bitwise ops on integers: BitwiseNot/And/Or/Xor and BitShift."""

from __future__ import annotations

import torch

from onnxport import importer

from ...context import NodeContext
from ._numeric import SAME_WIDTH_SIGNED, WIDE_UNSIGNED, carrier, restore, shift_right_logical

_BITWISE = {"BitwiseAnd": torch.bitwise_and, "BitwiseOr": torch.bitwise_or, "BitwiseXor": torch.bitwise_xor}


def _bits(x: torch.Tensor) -> torch.Tensor:
    """The same bits in a dtype torch has bitwise kernels for."""
    signed = SAME_WIDTH_SIGNED.get(x.dtype)
    return x.view(signed) if signed is not None else x


@importer("BitwiseNot", since=18)
def bitwise_not(ctx: NodeContext, x: torch.Tensor) -> torch.Tensor:
    """~x."""
    return torch.bitwise_not(_bits(x)).view(x.dtype)


@importer("BitwiseAnd", since=18)
@importer("BitwiseOr", since=18)
@importer("BitwiseXor", since=18)
def bitwise(ctx: NodeContext, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Element-wise a & b, a | b, a ^ b (broadcasting)."""
    return _BITWISE[ctx.op_type](_bits(a), _bits(b)).view(a.dtype)


@importer("BitShift", since=28)
def bit_shift(ctx: NodeContext, x: torch.Tensor, y: torch.Tensor, *, direction: str) -> torch.Tensor:
    """x << y or x >> y: right shifts sign-extend signed values and fill unsigned ones with
    zeros; a shift amount outside [0, bits) leaves only the sign fill (0 or -1)."""
    if direction not in ("LEFT", "RIGHT"):
        raise ctx.error(f"direction must be LEFT or RIGHT, got {direction!r}")
    dtype = x.dtype
    bits = x.element_size() * 8
    xc, yc = torch.broadcast_tensors(carrier(x), carrier(y))
    invalid = (yc < 0) | (yc >= bits)
    amount = torch.where(invalid, torch.zeros_like(yc), yc)
    if direction == "LEFT":
        out = torch.bitwise_left_shift(xc, amount)
        out = torch.where(invalid, torch.zeros_like(out), out)
    elif dtype == torch.uint64:
        out = shift_right_logical(xc, amount)
        out = torch.where(invalid, torch.zeros_like(out), out)
    else:
        out = torch.bitwise_right_shift(xc, amount)  # arithmetic for signed, logical for uint8
        fill = -(xc < 0).to(xc.dtype)  # -1 where negative, else 0
        out = torch.where(invalid, fill, out)
    return restore(out, dtype) if dtype in WIDE_UNSIGNED else out
