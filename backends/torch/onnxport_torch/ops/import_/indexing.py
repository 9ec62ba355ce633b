"""Gathering by index or mask: Gather, GatherElements, GatherND, Compress, Where, NonZero,
ReverseSequence."""

from __future__ import annotations

import math

import torch

from onnxport import importer

from .slice_split import norm_axis

_SIGNED = {torch.uint16: torch.int16, torch.uint32: torch.int32, torch.uint64: torch.int64}


def signed_view(x: torch.Tensor) -> torch.Tensor:
    """The same bits as a signed type, for kernels torch lacks for uint16/32/64 (data movement only)."""
    return x.view(_SIGNED[x.dtype]) if x.dtype in _SIGNED else x


def wrap_index(idx: torch.Tensor, n: int | torch.Tensor) -> torch.Tensor:
    """int64 indices with negative ones counted from the end (``-1`` -> ``n - 1``)."""
    idx = idx.to(torch.int64)
    return torch.where(idx < 0, idx + n, idx)


@importer("Gather", since=13)
def gather(ctx, data: torch.Tensor, indices: torch.Tensor, *, axis: int) -> torch.Tensor:
    a = norm_axis(ctx, axis, data.dim())
    idx = wrap_index(indices, data.shape[a])
    out = data.index_select(a, idx.reshape(-1))
    return out.reshape([*data.shape[:a], *indices.shape, *data.shape[a + 1:]])


@importer("GatherElements", since=13)
def gather_elements(ctx, data: torch.Tensor, indices: torch.Tensor, *, axis: int) -> torch.Tensor:
    a = norm_axis(ctx, axis, data.dim())
    return torch.gather(signed_view(data), a, wrap_index(indices, data.shape[a])).view(data.dtype)


@importer("GatherND", since=13)
def gather_nd(ctx, data: torch.Tensor, indices: torch.Tensor, *, batch_dims: int) -> torch.Tensor:
    b = batch_dims
    k = indices.shape[-1]
    if b + k > data.dim():
        raise ctx.error(f"indices address {k} dims after {b} batch dims of a rank-{data.dim()} input")
    batch = data.shape[:b]
    lookup = data.shape[b:b + k]
    rest = data.shape[b + k:]
    nb = math.prod(batch)
    flat = data.reshape([nb, math.prod(lookup), *rest])
    idx = indices.to(torch.int64).reshape(nb, -1, k)
    lin = torch.zeros(idx.shape[:2], dtype=torch.int64, device=data.device)
    for j, size in enumerate(lookup):
        lin = lin * size + wrap_index(idx[..., j], size)
    out = flat[torch.arange(nb, device=data.device).unsqueeze(1), lin]
    return out.reshape([*batch, *indices.shape[b:-1], *rest])


@importer("Compress", since=28)
def compress(ctx, x: torch.Tensor, condition: torch.Tensor, *, axis: int | None) -> torch.Tensor:
    cond = condition.reshape(-1).to(torch.bool)
    if axis is None:
        x, a = x.reshape(-1), 0
    else:
        a = norm_axis(ctx, axis, x.dim())
    if cond.numel() > x.shape[a]:
        raise ctx.error(f"condition has {cond.numel()} entries for an axis of length {x.shape[a]}")
    return x.index_select(a, torch.nonzero(cond).reshape(-1))


@importer("Where", since=16)
def where(ctx, condition: torch.Tensor, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return torch.where(condition, x, y)


@importer("NonZero", since=13)
def nonzero(ctx, x: torch.Tensor) -> torch.Tensor:
    if x.dim() == 0:
        return torch.zeros((0, int(bool(x != 0))), dtype=torch.int64)
    return torch.nonzero(x != 0).T.contiguous()


@importer("ReverseSequence", since=28)
def reverse_sequence(ctx, x: torch.Tensor, sequence_lens: torch.Tensor, *, batch_axis: int,
                     time_axis: int) -> torch.Tensor:
    b = norm_axis(ctx, batch_axis, x.dim())
    t = norm_axis(ctx, time_axis, x.dim())
    if b == t:
        raise ctx.error("batch_axis and time_axis must differ")
    steps = x.shape[t]
    lens = sequence_lens.to(torch.int64).clamp(0, steps).unsqueeze(1)   # (batch, 1)
    pos = torch.arange(steps).unsqueeze(0)                              # (1, time)
    src = torch.where(pos < lens, lens - 1 - pos, pos)                  # (batch, time)
    if b > t:
        src = src.T
    shape = [1] * x.dim()
    shape[b], shape[t] = x.shape[b], steps
    return torch.gather(signed_view(x), t, src.reshape(shape).expand(x.shape)).view(x.dtype)
