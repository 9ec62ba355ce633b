"""Tensors built from a few numbers: Range, EyeLike, OneHot, Trilu."""

from __future__ import annotations

import math

import torch

from onnxport import importer

from ...context import ints
from ...dtypes import to_torch_dtype


def _scalar(ctx, i: int, t: torch.Tensor) -> int | float:
    """Input ``i`` (a one-element tensor) as a Python number, import-time where known."""
    known = ctx.const_ints.get(i)
    if known:
        return known[0]
    c = ctx.const(i)
    if c is not None:
        return c.reshape(-1)[0].item()
    if type(t) is list:  # a shape program's ints (symbolic when traced)
        if len(t) != 1:
            raise ctx.error(f"input {i} must hold one element, got {len(t)}")
        return t[0]
    if t.numel() != 1:
        raise ctx.error(f"input {i} must hold one element, got shape {list(t.shape)}")
    return t.reshape(-1)[0].item()


@importer("Range", since=27)
def range_(ctx, start: torch.Tensor, limit: torch.Tensor, delta: torch.Tensor, *, stash_type: int) -> torch.Tensor:
    s, lim, d = _scalar(ctx, 0, start), _scalar(ctx, 1, limit), _scalar(ctx, 2, delta)
    if d == 0:
        raise ctx.error("delta must not be zero")
    dtype = start.dtype
    if dtype.is_floating_point:
        n = max(math.ceil((lim - s) / d), 0)
        # output[i] = start + i * delta, computed in float64 and rounded once to the output type
        steps = torch.arange(n, dtype=torch.float64)
        if dtype in (torch.float16, torch.bfloat16) and not stash_type:
            # no stash: start and delta are used in the narrow type itself
            s = torch.tensor(s, dtype=dtype).item()
            d = torch.tensor(d, dtype=dtype).item()
        return (steps * d + s).to(dtype)
    s, lim, d = int(s), int(lim), int(d)
    n = max(-((s - lim) // d), 0)  # ceil((lim - s) / d) in exact integer arithmetic
    return (torch.arange(n, dtype=torch.int64) * d + s).to(dtype)


@importer("EyeLike", since=22)
def eye_like(ctx, x: torch.Tensor, *, dtype: int | None, k: int) -> torch.Tensor:
    if x.dim() != 2:
        raise ctx.error(f"input must be 2-D, got shape {list(x.shape)}")
    out_dtype = to_torch_dtype(dtype) if dtype is not None else x.dtype
    rows = torch.arange(x.shape[0]).unsqueeze(1)
    cols = torch.arange(x.shape[1]).unsqueeze(0)
    return (cols - rows == k).to(out_dtype)


@importer("OneHot", since=28)
def one_hot(ctx, indices: torch.Tensor, depth: torch.Tensor, values: torch.Tensor, *, axis: int) -> torch.Tensor:
    n = int(_scalar(ctx, 1, depth))
    if n < 1:
        raise ctx.error(f"depth must be positive, got {n}")
    if values.numel() != 2:
        raise ctx.error(f"values must hold [off_value, on_value], got {values.numel()} elements")
    rank = indices.dim() + 1
    a = axis + rank if axis < 0 else axis
    if not 0 <= a < rank:
        raise ctx.error(f"axis {axis} is out of range for output rank {rank}")
    idx = indices.to(torch.int64) if not indices.dtype.is_floating_point else indices.trunc().to(torch.int64)
    idx = torch.where(idx < 0, idx + n, idx).unsqueeze(a)
    shape = [1] * rank
    shape[a] = n
    classes = torch.arange(n).reshape(shape)
    off, on = values.reshape(-1)[0], values.reshape(-1)[1]
    return torch.where(idx == classes, on, off)


@importer("Trilu", since=14)
def trilu(ctx, x: torch.Tensor, k: torch.Tensor | None = None, *, upper: int) -> torch.Tensor:
    diag = ints(ctx, 1, k)[0] if k is not None else 0
    if x.dim() < 2:
        raise ctx.error(f"input must have rank >= 2, got shape {list(x.shape)}")
    rows, cols = x.shape[-2], x.shape[-1]
    r = torch.arange(rows).unsqueeze(1)
    c = torch.arange(cols).unsqueeze(0)
    keep = (c - r >= diag) if upper else (c - r <= diag)
    return torch.where(keep, x, torch.zeros((), dtype=x.dtype))
