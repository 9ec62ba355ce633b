"""Order-based selection: TopK (ties keep the lower index first) and Unique."""

from __future__ import annotations

import torch

from onnxport import importer

from ...context import ints
from .slice_split import norm_axis


@importer("TopK", since=24)
def topk(ctx, x: torch.Tensor, k: torch.Tensor, *, axis: int, largest: int,
         sorted: int) -> tuple[torch.Tensor, torch.Tensor]:  # noqa: A002 - the ONNX attribute name
    a = norm_axis(ctx, axis, x.dim())
    (n,) = ints(ctx, 1, k)
    if not 0 <= n <= x.shape[a]:
        raise ctx.error(f"k={n} is out of range for an axis of length {x.shape[a]}")
    # a stable sort puts equal values in index order, which ONNX requires; sorted=0 allows any order
    values, indices = torch.sort(x, dim=a, descending=bool(largest), stable=True)
    return values.narrow(a, 0, n), indices.narrow(a, 0, n)


@importer("Unique", since=28)
def unique(ctx, x: torch.Tensor, *, axis: int | None,
           sorted: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:  # noqa: A002
    if axis is None:
        src, a = x.reshape(-1), 0
        values, inverse, counts = torch.unique(src, sorted=True, return_inverse=True, return_counts=True)
    else:
        a = norm_axis(ctx, axis, x.dim())
        src = x
        values, inverse, counts = torch.unique(src, sorted=True, return_inverse=True, return_counts=True, dim=a)
    inverse = inverse.reshape(-1)
    n = src.shape[a]
    first = torch.full((counts.numel(),), n, dtype=torch.int64).scatter_reduce(
        0, inverse, torch.arange(n, dtype=torch.int64), "amin", include_self=True)
    if not sorted:
        # order of first occurrence
        order = torch.argsort(first, stable=True)
        rank = torch.empty_like(order).scatter_(0, order, torch.arange(order.numel()))
        values = values.index_select(a, order)
        counts, first, inverse = counts[order], first[order], rank[inverse]
    return values, first, inverse, counts.to(torch.int64)
