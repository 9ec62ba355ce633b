"""Element-wise unary math: Abs, Neg, Exp, Log, Sqrt, Reciprocal, Floor, Ceil, Round, Sign,
Erf, the trigonometric and hyperbolic functions, IsNaN and IsInf."""

from __future__ import annotations

import torch

from onnxport import importer

from ...context import NodeContext
from ._numeric import WIDE_UNSIGNED, carrier, restore

#: float-only functions: ONNX op -> torch function
_FLOAT_FNS = {
    "Exp": torch.exp, "Log": torch.log, "Sqrt": torch.sqrt, "Reciprocal": torch.reciprocal,
    "Floor": torch.floor, "Ceil": torch.ceil, "Round": torch.round,  # round: half to even
    "Erf": torch.erf,
    "Sin": torch.sin, "Cos": torch.cos, "Tan": torch.tan,
    "Asin": torch.asin, "Acos": torch.acos, "Atan": torch.atan,
    "Sinh": torch.sinh, "Cosh": torch.cosh,
    "Asinh": torch.asinh, "Acosh": torch.acosh, "Atanh": torch.atanh,
}


@importer("Exp", since=13)
@importer("Log", since=13)
@importer("Sqrt", since=13)
@importer("Reciprocal", since=13)
@importer("Floor", since=13)
@importer("Ceil", since=13)
@importer("Round", since=22)
@importer("Erf", since=13)
@importer("Sin", since=22)
@importer("Cos", since=22)
@importer("Tan", since=22)
@importer("Asin", since=22)
@importer("Acos", since=22)
@importer("Atan", since=22)
@importer("Sinh", since=22)
@importer("Cosh", since=22)
@importer("Asinh", since=22)
@importer("Acosh", since=22)
@importer("Atanh", since=22)
def float_fn(ctx: NodeContext, x: torch.Tensor) -> torch.Tensor:
    """Apply a float-only element-wise function."""
    if not x.is_floating_point():
        raise ctx.error(f"{ctx.op_type} needs a floating-point input, got {x.dtype}")
    return _FLOAT_FNS[ctx.op_type](x)


@importer("Abs", since=13)
def abs_(ctx: NodeContext, x: torch.Tensor) -> torch.Tensor:
    """|x|; unsigned values are their own absolute value."""
    if x.dtype in WIDE_UNSIGNED or x.dtype == torch.uint8:
        return x.clone()
    return torch.abs(x)


@importer("Neg", since=13)
def neg(ctx: NodeContext, x: torch.Tensor) -> torch.Tensor:
    """-x (integers wrap around at their minimum)."""
    return torch.neg(x)


@importer("Sign", since=13)
def sign(ctx: NodeContext, x: torch.Tensor) -> torch.Tensor:
    """-1, 0 or 1 by the sign of x (NaN stays NaN, as in onnxruntime and numpy; torch.sign gives 0)."""
    if x.dtype in WIDE_UNSIGNED:
        return restore((carrier(x) != 0).to(torch.int64), x.dtype)
    if x.is_floating_point():
        return torch.where(torch.isnan(x), x, torch.sign(x))
    return torch.sign(x)


@importer("IsNaN", since=20)
def isnan(ctx: NodeContext, x: torch.Tensor) -> torch.Tensor:
    """Whether each element is NaN."""
    if x.element_size() == 1 and x.is_floating_point():  # float8: no kernels, widen exactly
        x = x.to(torch.float32)
    return torch.isnan(x)


@importer("IsInf", since=20)
def isinf(ctx: NodeContext, x: torch.Tensor, *, detect_negative: int, detect_positive: int) -> torch.Tensor:
    """Whether each element is +inf (``detect_positive``) or -inf (``detect_negative``)."""
    if x.element_size() == 1 and x.is_floating_point():
        x = x.to(torch.float32)
    if detect_negative and detect_positive:
        return torch.isinf(x)
    if detect_positive:
        return torch.isposinf(x)
    if detect_negative:
        return torch.isneginf(x)
    return torch.zeros_like(x, dtype=torch.bool)
