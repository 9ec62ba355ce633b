"""Element-wise activations: Relu, Sigmoid, Tanh, LeakyRelu, PRelu, Elu, Selu, Celu, Gelu,
HardSigmoid, HardSwish, Softplus, Softsign, ThresholdedRelu, Mish, Swish, Shrink and Clip."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from onnxport import importer

from ...context import NodeContext
from ._numeric import WIDE_UNSIGNED, is_float, ordered, unordered


@importer("Relu", since=14)
def relu(ctx: NodeContext, x: torch.Tensor) -> torch.Tensor:
    """max(x, 0)."""
    return torch.relu(x)


@importer("Sigmoid", since=13)
def sigmoid(ctx: NodeContext, x: torch.Tensor) -> torch.Tensor:
    """1 / (1 + exp(-x))."""
    return torch.sigmoid(x)


@importer("Tanh", since=13)
def tanh(ctx: NodeContext, x: torch.Tensor) -> torch.Tensor:
    """Hyperbolic tangent."""
    return torch.tanh(x)


@importer("LeakyRelu", since=16)
def leaky_relu(ctx: NodeContext, x: torch.Tensor, *, alpha: float) -> torch.Tensor:
    """x for x >= 0, alpha * x otherwise."""
    return F.leaky_relu(x, alpha)


@importer("PRelu", since=16)
def prelu(ctx: NodeContext, x: torch.Tensor, slope: torch.Tensor) -> torch.Tensor:
    """x for x >= 0, slope * x otherwise (slope broadcasts to x)."""
    if x.dtype in WIDE_UNSIGNED:  # never negative
        return x.clone()
    return torch.where(x < 0, x * slope, x).to(x.dtype)


@importer("Elu", since=22)
def elu(ctx: NodeContext, x: torch.Tensor, *, alpha: float) -> torch.Tensor:
    """x for x > 0, alpha * (exp(x) - 1) otherwise."""
    return F.elu(x, alpha)


@importer("Selu", since=22)
def selu(ctx: NodeContext, x: torch.Tensor, *, alpha: float, gamma: float) -> torch.Tensor:
    """gamma * x for x > 0, gamma * alpha * (exp(x) - 1) otherwise."""
    return gamma * torch.where(x > 0, x, alpha * torch.expm1(x))


@importer("Celu", since=28)
def celu(ctx: NodeContext, x: torch.Tensor, *, alpha: float) -> torch.Tensor:
    """max(0, x) + min(0, alpha * (exp(x / alpha) - 1))."""
    return F.celu(x, alpha)


@importer("Gelu", since=20)
def gelu(ctx: NodeContext, x: torch.Tensor, *, approximate: str) -> torch.Tensor:
    """Gaussian error linear unit, exact (``none``) or the ``tanh`` approximation.

    Non-finite inputs, and the finite ones whose product overflows, give what the ONNX function
    body (``0.5 * x * (1 + erf(x / sqrt(2)))``, likewise with tanh) gives in IEEE arithmetic:
    +inf at +inf, NaN at -inf and NaN, ``x`` where the product overflows. torch's vectorised gelu
    kernels disagree there among themselves (which one runs depends on the CPU).
    """
    if approximate not in ("none", "tanh"):
        raise ctx.error(f"approximate must be 'none' or 'tanh', got {approximate!r}")
    y = F.gelu(x, approximate=approximate)
    # x * (x > 0): +inf -> +inf, -inf -> -inf * 0 = NaN, NaN -> NaN, a huge finite x -> x
    return torch.where(torch.isfinite(x) & torch.isfinite(y), y, x * (x > 0))


@importer("HardSigmoid", since=22)
def hard_sigmoid(ctx: NodeContext, x: torch.Tensor, *, alpha: float, beta: float) -> torch.Tensor:
    """max(0, min(1, alpha * x + beta))."""
    return torch.clamp(alpha * x + beta, 0.0, 1.0)


@importer("HardSwish", since=22)
def hard_swish(ctx: NodeContext, x: torch.Tensor) -> torch.Tensor:
    """x * max(0, min(1, x / 6 + 1/2))."""
    return F.hardswish(x)


@importer("Softplus", since=22)
def softplus(ctx: NodeContext, x: torch.Tensor) -> torch.Tensor:
    """log(exp(x) + 1), computed without overflow."""
    return torch.logaddexp(x, torch.zeros((), dtype=x.dtype))


@importer("Softsign", since=22)
def softsign(ctx: NodeContext, x: torch.Tensor) -> torch.Tensor:
    """x / (1 + |x|)."""
    return F.softsign(x)


@importer("ThresholdedRelu", since=22)
def thresholded_relu(ctx: NodeContext, x: torch.Tensor, *, alpha: float) -> torch.Tensor:
    """x for x > alpha, 0 otherwise."""
    return torch.where(x > alpha, x, torch.zeros((), dtype=x.dtype))


@importer("Mish", since=22)
def mish(ctx: NodeContext, x: torch.Tensor) -> torch.Tensor:
    """x * tanh(softplus(x))."""
    return F.mish(x)


@importer("Swish", since=24)
def swish(ctx: NodeContext, x: torch.Tensor, *, alpha: float) -> torch.Tensor:
    """x * sigmoid(alpha * x)."""
    return x * torch.sigmoid(alpha * x)


@importer("Shrink", since=9)
def shrink(ctx: NodeContext, x: torch.Tensor, *, bias: float, lambd: float) -> torch.Tensor:
    """x + bias for x < -lambd, x - bias for x > lambd, 0 otherwise (in the type of x)."""
    # integers go through float64 like the float bias does in ONNX's definition (numpy promotion)
    v = x if is_float(x) else x.to(torch.float64)
    y = torch.where(v < -lambd, v + bias, torch.where(v > lambd, v - bias, torch.zeros((), dtype=v.dtype)))
    return y if is_float(x) else y.to(x.dtype)


@importer("Clip", since=13)
def clip(ctx: NodeContext, x: torch.Tensor, lo: torch.Tensor | None = None,
         hi: torch.Tensor | None = None) -> torch.Tensor:
    """Clamp x to [min, max]; a missing bound does not clamp (min > max gives max)."""
    if lo is None and hi is None:
        return x.clone()
    if x.dtype in WIDE_UNSIGNED:
        lo = ordered(lo) if lo is not None else None
        hi = ordered(hi) if hi is not None else None
        return unordered(torch.clamp(ordered(x), lo, hi), x.dtype)
    return torch.clamp(x, lo, hi)
