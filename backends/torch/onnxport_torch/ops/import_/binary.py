"""Broadcasting arithmetic (Add, Sub, Mul, Div, Pow, Mod) and the variadic Sum, Mean, Max, Min."""

from __future__ import annotations

import functools

import torch

from onnxport import importer

from ...context import NodeContext
from ._numeric import WIDE_UNSIGNED, carrier, is_float, ordered, restore, udivmod64, unordered

_ARITH = {"Add": torch.add, "Sub": torch.sub, "Mul": torch.mul}


@importer("Add", since=14)
@importer("Sub", since=14)
@importer("Mul", since=14)
def arith(ctx: NodeContext, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Element-wise a+b, a-b, a*b; integers wrap around like ONNX runtimes do."""
    fn = _ARITH[ctx.op_type]
    if a.dtype in WIDE_UNSIGNED:
        return restore(fn(carrier(a), carrier(b)), a.dtype)
    if a.dtype == torch.bool:
        raise ctx.error(f"{ctx.op_type} is not defined for bool tensors")
    return fn(a, b)


@importer("Div", since=14)
def div(ctx: NodeContext, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """a / b; integer division truncates toward zero."""
    if is_float(a):
        return torch.div(a, b)
    if a.dtype == torch.uint64:
        q, _ = udivmod64(carrier(a), carrier(b))
        return restore(q, a.dtype)
    if a.dtype in WIDE_UNSIGNED:
        return restore(torch.div(carrier(a), carrier(b), rounding_mode="trunc"), a.dtype)
    return torch.div(a, b, rounding_mode="trunc")


@importer("Mod", since=28)
def mod(ctx: NodeContext, a: torch.Tensor, b: torch.Tensor, *, fmod: int) -> torch.Tensor:
    """Remainder: with ``fmod`` it takes the dividend's sign (C fmod), else the divisor's."""
    if a.dtype == torch.uint64:
        _, r = udivmod64(carrier(a), carrier(b))
        return restore(r, a.dtype)
    if a.dtype in WIDE_UNSIGNED:
        return restore(torch.remainder(carrier(a), carrier(b)), a.dtype)
    if fmod:
        return torch.fmod(a, b)
    return torch.remainder(a, b)


@importer("Pow", since=15)
def pow_(ctx: NodeContext, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """x ** y, in the type of ``x`` (the exponent may have another numeric type)."""
    dtype = x.dtype
    if is_float(y) or (is_float(x) and y.dtype in WIDE_UNSIGNED):
        if not is_float(x):
            x = x.to(torch.float64)  # an integer base with a float exponent: truncated back
        return torch.pow(x, y.to(torch.float64) if y.dtype in WIDE_UNSIGNED else y).to(dtype)
    if dtype in WIDE_UNSIGNED or y.dtype in WIDE_UNSIGNED:
        return restore(torch.pow(carrier(x), carrier(y)), dtype)
    return torch.pow(x, y).to(dtype)


@importer("Sum", since=13)
def sum_(ctx: NodeContext, *xs: torch.Tensor) -> torch.Tensor:
    """Element-wise sum of all inputs (broadcasting)."""
    return functools.reduce(torch.add, xs[1:], xs[0])


@importer("Mean", since=13)
def mean(ctx: NodeContext, *xs: torch.Tensor) -> torch.Tensor:
    """Element-wise mean of all inputs (broadcasting)."""
    return functools.reduce(torch.add, xs[1:], xs[0]) / len(xs)


@importer("Max", since=13)
@importer("Min", since=13)
def extremum(ctx: NodeContext, *xs: torch.Tensor) -> torch.Tensor:
    """Element-wise maximum / minimum of all inputs; a NaN in any input gives NaN."""
    fn = torch.maximum if ctx.op_type == "Max" else torch.minimum
    dtype = xs[0].dtype
    if dtype in WIDE_UNSIGNED:
        return unordered(functools.reduce(fn, [ordered(x) for x in xs]), dtype)
    if len(xs) == 1:
        return xs[0].clone()
    return functools.reduce(fn, xs[1:], xs[0])
