"""Cast and CastLike between every element type torch can hold (strings cannot be held).

float8 targets follow ONNX's saturate rules; FLOAT8E8M0 its round modes; the narrow integer
types (int4, uint4, int2, uint2) are held widened in int8/uint8 and wrap around like ONNX does.
"""

from __future__ import annotations

import onnx_ir as ir
import torch

from onnxport import importer
from onnxport.errors import ConversionError

from ...context import NodeContext
from ...dtypes import to_torch_dtype

DT = ir.DataType

#: float8 types: (largest finite value, the magnitude from which rounding overflows, whether that
#: midpoint itself overflows (odd mantissa at the max), the non-saturating overflow value is inf)
_FLOAT8 = {
    DT.FLOAT8E4M3FN: (448.0, 464.0, False, False),
    DT.FLOAT8E4M3FNUZ: (240.0, 248.0, True, False),
    DT.FLOAT8E5M2: (57344.0, 61440.0, True, True),
    DT.FLOAT8E5M2FNUZ: (57344.0, 61440.0, True, False),
}
#: narrow integers: (bits, signed)
_NARROW = {DT.INT4: (4, True), DT.UINT4: (4, False), DT.INT2: (2, True), DT.UINT2: (2, False)}
_ROUND_MODES = ("up", "down", "nearest")


def _widen(x: torch.Tensor) -> torch.Tensor:
    """float8 values in float32 (exact); everything else unchanged."""
    if x.is_floating_point() and x.element_size() == 1:
        return x.to(torch.float32)
    return x


def _to_float8(x: torch.Tensor, target: DT, saturate: bool) -> torch.Tensor:
    mx, overflow_at, tie_overflows, inf_on_overflow = _FLOAT8[target]
    y = _widen(x)
    if not y.is_floating_point():
        y = y.to(torch.float64) if y.element_size() >= 4 else y.to(torch.float32)
    if y.dtype in (torch.float16, torch.bfloat16):
        y = y.to(torch.float32)
    clamped = torch.clamp(y, -mx, mx)  # NaN stays NaN
    if not saturate:
        a = torch.abs(y)
        over = (a > overflow_at) | ((a == overflow_at) if tie_overflows else torch.zeros_like(a, dtype=torch.bool))
        overflow = torch.copysign(torch.full_like(y, float("inf")), y) if inf_on_overflow else torch.full_like(y, float("nan"))
        clamped = torch.where(over, overflow, clamped)
    return clamped.to(to_torch_dtype(target))


def _to_float8e8m0(x: torch.Tensor, saturate: bool, round_mode: str) -> torch.Tensor:
    """ONNX's float32 -> E8M0 rule: keep the float32 exponent, rounded per ``round_mode``."""
    bits = _widen(x).to(torch.float32).view(torch.int32).to(torch.int64) & 0xFFFFFFFF
    exponent = (bits >> 23) & 0xFF
    special = exponent == 0xFF
    if round_mode == "nearest":
        g = (bits & 0x400000) != 0
        r = (bits & 0x200000) != 0
        s = (bits & 0x1FFFFF) != 0
        up = g & (r | s | (exponent > 0))
    elif round_mode == "up":
        up = (bits & 0x7FFFFF) != 0
    else:
        up = torch.zeros_like(special)
    up = up & ~special
    if saturate:
        up = up & (exponent != 0xFE)
    exponent = torch.where(special, torch.full_like(exponent, 0xFF), exponent + up.to(torch.int64))
    return (exponent & 0xFF).to(torch.uint8).view(torch.float8_e8m0fnu)


def _to_narrow_int(x: torch.Tensor, target: DT) -> torch.Tensor:
    """Truncate toward zero, then keep the low ``bits`` (two's complement for signed types)."""
    bits, signed = _NARROW[target]
    y = _widen(x)
    v = torch.trunc(y).to(torch.int64) if y.is_floating_point() else y.to(torch.int64)
    span = 1 << bits
    if signed:
        half = span >> 1
        return (torch.remainder(v + half, span) - half).to(torch.int8)
    return torch.remainder(v, span).to(torch.uint8)


def _to_float4e2m1(x: torch.Tensor, held: torch.dtype) -> torch.Tensor:
    """Round to nearest-even on the E2M1 grid (0, 0.5, 1, 1.5, 2, 3, 4, 6), saturating at 6."""
    y = _widen(x).to(torch.float32)
    a = torch.clamp(torch.abs(y), max=6.0)
    step = torch.where(a < 2.0, 0.5, torch.where(a < 4.0, 1.0, 2.0))
    q = torch.round(a / step) * step  # torch.round: half to even
    return torch.copysign(q, y).to(held)


def cast_to(ctx: NodeContext, x: torch.Tensor, target: DT, saturate: int, round_mode: str) -> torch.Tensor:
    """``x`` converted to the ONNX element type ``target``."""
    if target == DT.STRING:
        raise ctx.error("cannot cast to STRING: torch has no string tensors")
    if round_mode not in _ROUND_MODES:
        raise ctx.error(f"round_mode must be one of {_ROUND_MODES}, got {round_mode!r}")
    try:
        held = to_torch_dtype(target)
    except ConversionError as exc:
        raise ctx.error(str(exc)) from None
    if target in _FLOAT8:
        return _to_float8(x, target, bool(saturate))
    if target == DT.FLOAT8E8M0:
        return _to_float8e8m0(x, bool(saturate), round_mode)
    if target in _NARROW:
        return _to_narrow_int(x, target)
    if target == DT.FLOAT4E2M1:
        return _to_float4e2m1(x, held)
    return _widen(x).to(ctx.compute_dtype(held))


@importer("Cast", since=28)
def cast(ctx: NodeContext, x: torch.Tensor, *, to: int, saturate: int, round_mode: str) -> torch.Tensor:
    """``x`` in the element type ``to``."""
    return cast_to(ctx, x, DT(to), saturate, round_mode)


@importer("CastLike", since=25)
def cast_like(ctx: NodeContext, x: torch.Tensor, target_type: torch.Tensor, *, saturate: int, round_mode: str) -> torch.Tensor:
    """``x`` in the element type of ``target_type``."""
    target = ctx.input_dtype(1)
    if target is None:
        raise ctx.error("the element type of target_type is unknown")
    return cast_to(ctx, x, DT(target), saturate, round_mode)
