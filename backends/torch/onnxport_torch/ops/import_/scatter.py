"""ScatterElements and ScatterND, with their ``reduction`` (none, add, mul, max, min)."""

from __future__ import annotations

import math

import torch

from onnxport import importer

from .indexing import signed_view, wrap_index
from .slice_split import norm_axis

_REDUCE = {"add": "sum", "mul": "prod", "max": "amax", "min": "amin"}


def _scatter(ctx, data: torch.Tensor, dim: int, index: torch.Tensor, updates: torch.Tensor,
             reduction: str) -> torch.Tensor:
    if reduction not in _REDUCE and reduction != "none":
        raise ctx.error(f"unknown reduction {reduction!r}")
    if data.dtype in (torch.uint16, torch.uint32, torch.uint64):
        # no uint kernels: signed bits give the same none/add/mul results (wrap-around arithmetic);
        # for max/min, flipping the top bit maps unsigned order onto signed order
        flip = reduction in ("max", "min")
        a, b = signed_view(data), signed_view(updates.to(data.dtype))
        if flip:
            top = torch.tensor(torch.iinfo(a.dtype).min, dtype=a.dtype)
            a, b = a ^ top, b ^ top
        out = _scatter(ctx, a, dim, index, b, reduction)
        return (out ^ top if flip else out).view(data.dtype)
    if reduction == "none":
        return data.scatter(dim, index, updates)
    if data.dtype == torch.bool:
        # sum/max of booleans is "or", prod/min is "and"
        op = "amax" if reduction in ("add", "max") else "amin"
        return data.to(torch.uint8).scatter_reduce(dim, index, updates.to(torch.uint8), op).to(torch.bool)
    return data.scatter_reduce(dim, index, updates, _REDUCE[reduction], include_self=True)


@importer("ScatterElements", since=18)
def scatter_elements(ctx, data: torch.Tensor, indices: torch.Tensor, updates: torch.Tensor, *,
                     axis: int, reduction: str) -> torch.Tensor:
    a = norm_axis(ctx, axis, data.dim())
    return _scatter(ctx, data, a, wrap_index(indices, data.shape[a]), updates, reduction)


@importer("ScatterND", since=18)
def scatter_nd(ctx, data: torch.Tensor, indices: torch.Tensor, updates: torch.Tensor, *,
               reduction: str) -> torch.Tensor:
    k = indices.shape[-1]
    if k > data.dim():
        raise ctx.error(f"indices address {k} dims of a rank-{data.dim()} input")
    lookup, rest = data.shape[:k], data.shape[k:]
    flat = data.reshape([math.prod(lookup), *rest])
    idx = indices.to(torch.int64).reshape(-1, k)
    lin = torch.zeros(idx.shape[0], dtype=torch.int64)
    for j, size in enumerate(lookup):
        lin = lin * size + wrap_index(idx[:, j], size)
    upd = updates.reshape([idx.shape[0], *rest])
    index = lin.reshape(-1, *([1] * len(rest))).expand(upd.shape)
    return _scatter(ctx, flat, 0, index, upd, reduction).reshape(data.shape)
