"""Reductions: ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceProd, ReduceL1, ReduceL2,
ReduceLogSum, ReduceLogSumExp, ReduceSumSquare, and ArgMax/ArgMin."""

from __future__ import annotations

import torch

from onnxport import importer

from ...context import NodeContext, ints
from ._numeric import WIDE_UNSIGNED, carrier, is_float, ordered, restore, unordered


def _dims(ctx: NodeContext, x: torch.Tensor, axes: torch.Tensor | None, noop_with_empty_axes: int) -> list[int]:
    """The axes to reduce, normalized and sorted; [] means no reduction."""
    listed = ints(ctx, 1, axes)
    if not listed:
        return [] if noop_with_empty_axes else list(range(x.dim()))
    rank = max(x.dim(), 1)
    for a in listed:
        if not -rank <= a < rank:
            raise ctx.error(f"axis {a} is out of range for a rank-{x.dim()} input")
    return sorted({a % rank for a in listed}) if x.dim() else []


def _sum(x: torch.Tensor, dims: list[int], keepdims: bool) -> torch.Tensor:
    """Sum over ``dims`` in the type of x (integers wrap around)."""
    if not dims:
        return x
    if x.dtype in WIDE_UNSIGNED:
        return restore(torch.sum(carrier(x), dims, keepdim=keepdims), x.dtype)
    return torch.sum(x, dims, keepdim=keepdims, dtype=x.dtype)


def _prod(x: torch.Tensor, dims: list[int], keepdims: bool) -> torch.Tensor:
    """Product over ``dims`` in the type of x."""
    dtype = x.dtype
    y = carrier(x)
    for d in sorted(dims, reverse=True):
        y = torch.prod(y, d, keepdim=keepdims, dtype=y.dtype)
    return restore(y, dtype) if dtype in WIDE_UNSIGNED else y


def _extremum(x: torch.Tensor, dims: list[int], keepdims: bool, largest: bool) -> torch.Tensor:
    """Max or min over ``dims``; an empty reduction gives the type's lowest (highest) value."""
    if not dims:
        return x
    if x.dtype == torch.bool:
        fn = torch.any if largest else torch.all
        y = x
        for d in sorted(dims, reverse=True):
            y = fn(y, d, keepdim=keepdims)
        return y
    if any(x.shape[d] == 0 for d in dims):
        shape = [1 if d in dims else s for d, s in enumerate(x.shape)] if keepdims else [
            s for d, s in enumerate(x.shape) if d not in dims]
        if is_float(x):
            fill = float("-inf") if largest else float("inf")
        else:
            info = torch.iinfo(x.dtype)
            fill = info.min if largest else info.max
        return torch.full(shape, fill, dtype=x.dtype)
    fn = torch.amax if largest else torch.amin
    if x.dtype in WIDE_UNSIGNED:
        return unordered(fn(ordered(x), dims, keepdim=keepdims), x.dtype)
    return fn(x, dims, keepdim=keepdims)


def _float_of(x: torch.Tensor) -> torch.Tensor:
    """x itself if floating point, else float64 (exact for every integer type but 64-bit ones)."""
    return x if is_float(x) else x.to(torch.float64)


def _back(y: torch.Tensor, like: torch.Tensor) -> torch.Tensor:
    """A float result back in the input's type (integers truncate toward zero, as numpy does)."""
    return y if y.dtype == like.dtype else y.to(like.dtype)


@importer("ReduceSum", since=13)
@importer("ReduceMean", since=18)
@importer("ReduceMax", since=20)
@importer("ReduceMin", since=20)
@importer("ReduceProd", since=18)
@importer("ReduceL1", since=18)
@importer("ReduceL2", since=18)
@importer("ReduceLogSum", since=28)
@importer("ReduceLogSumExp", since=28)
@importer("ReduceSumSquare", since=18)
def reduce(ctx: NodeContext, data: torch.Tensor, axes: torch.Tensor | None = None, *, keepdims: int,
           noop_with_empty_axes: int) -> torch.Tensor:
    """Reduce ``data`` over ``axes`` (all axes when empty, none with ``noop_with_empty_axes``)."""
    dims = _dims(ctx, data, axes, noop_with_empty_axes)
    keep = bool(keepdims)
    op = ctx.op_type
    if op == "ReduceSum":
        return _sum(data, dims, keep)
    if op == "ReduceMax":
        return _extremum(data, dims, keep, largest=True)
    if op == "ReduceMin":
        return _extremum(data, dims, keep, largest=False)
    if op == "ReduceProd":
        return _prod(data, dims, keep)
    if op == "ReduceSumSquare":
        return _sum(data * data if data.dtype not in WIDE_UNSIGNED else restore(carrier(data) ** 2, data.dtype),
                    dims, keep)
    if op == "ReduceL1":
        return _sum(data.abs() if data.dtype not in WIDE_UNSIGNED and data.dtype != torch.uint8 else data, dims, keep)
    x = _float_of(data)
    if op == "ReduceMean":
        y = torch.mean(x, dims, keepdim=keep) if dims else x
    elif op == "ReduceL2":
        y = torch.sqrt(torch.sum(x * x, dims, keepdim=keep)) if dims else x.abs()
    elif op == "ReduceLogSum":
        y = torch.log(torch.sum(x, dims, keepdim=keep) if dims else x)
    else:  # ReduceLogSumExp
        y = torch.logsumexp(x, dims, keepdim=keep) if dims else x.clone()
    return _back(y, data)


@importer("ArgMax", since=13)
@importer("ArgMin", since=13)
def arg_extremum(ctx: NodeContext, data: torch.Tensor, *, axis: int, keepdims: int, select_last_index: int) -> torch.Tensor:
    """int64 index of the first (``select_last_index``: last) max/min along ``axis``."""
    fn = torch.argmax if ctx.op_type == "ArgMax" else torch.argmin
    x = ordered(data)
    if x.dtype == torch.bool:
        x = x.to(torch.uint8)
    if data.dim() == 0:
        return torch.zeros((), dtype=torch.int64)
    axis = axis % data.dim()
    if select_last_index:
        n = x.shape[axis]
        return (n - 1) - fn(torch.flip(x, [axis]), dim=axis, keepdim=bool(keepdims))
    return fn(x, dim=axis, keepdim=bool(keepdims))
