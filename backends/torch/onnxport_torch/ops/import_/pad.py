"""Pad (constant, reflect, edge, wrap; negative pads crop) and CenterCropPad."""

from __future__ import annotations

import torch

from onnxport import importer

from ...context import ints


def _axes(ctx, i: int, tensor: torch.Tensor | None, rank: int) -> list[int]:
    if tensor is None:
        return list(range(rank))
    out = []
    for a in ints(ctx, i, tensor):
        b = a + rank if a < 0 else a
        if not 0 <= b < rank:
            raise ctx.error(f"axis {a} is out of range for rank {rank}")
        out.append(b)
    return out


def _source_index(mode: str, begin: int, end: int, n: int) -> torch.Tensor:
    """For each output position along one axis, the input position it copies."""
    pos = torch.arange(-begin, n + end)
    if mode == "edge":
        return pos.clamp(0, n - 1)
    if mode == "wrap":
        return pos.remainder(n)
    # reflect: mirror about the first and last element, period 2 * (n - 1) (numpy's rule for any width)
    if n == 1:
        return torch.zeros_like(pos)
    period = 2 * (n - 1)
    p = pos.remainder(period)
    return torch.where(p < n, p, period - p)


@importer("Pad", since=25)
def pad(ctx, data: torch.Tensor, pads: torch.Tensor, constant_value: torch.Tensor | None = None,
        axes: torch.Tensor | None = None, *, mode: str) -> torch.Tensor:
    rank = data.dim()
    dims = _axes(ctx, 3, axes, rank)
    p = ints(ctx, 1, pads)
    if len(p) != 2 * len(dims):
        raise ctx.error(f"pads has {len(p)} entries, expected {2 * len(dims)} (2 per axis)")
    begins, ends = [0] * rank, [0] * rank
    for k, a in enumerate(dims):
        begins[a], ends[a] = p[k], p[len(dims) + k]
    # negative pads crop first
    x = data
    for a in range(rank):
        lo, hi = max(-begins[a], 0), max(-ends[a], 0)
        if lo or hi:
            n = x.shape[a]
            x = x.narrow(a, min(lo, n), max(n - lo - hi, 0))
    begins = [max(b, 0) for b in begins]
    ends = [max(e, 0) for e in ends]
    if mode == "constant":
        shape = [x.shape[a] + begins[a] + ends[a] for a in range(rank)]
        if constant_value is not None and constant_value.numel():
            fill = constant_value.reshape(-1)[0].to(x.dtype)
        else:
            fill = torch.zeros((), dtype=x.dtype)
        out = fill.expand(shape).clone()
        region = tuple(slice(begins[a], begins[a] + x.shape[a]) for a in range(rank))
        out[region] = x
        return out
    if mode not in ("reflect", "edge", "wrap"):
        raise ctx.error(f"unknown pad mode {mode!r}")
    for a in range(rank):
        if not (begins[a] or ends[a]):
            continue
        n = x.shape[a]
        if n == 0:
            raise ctx.error(f"{mode} padding of an empty axis {a}")
        x = x.index_select(a, _source_index(mode, begins[a], ends[a], n))
    return x


@importer("CenterCropPad", since=18)
def center_crop_pad(ctx, x: torch.Tensor, shape: torch.Tensor, *, axes: list[int] | None) -> torch.Tensor:
    rank = x.dim()
    dims = list(range(rank)) if axes is None else [a + rank if a < 0 else a for a in axes]
    target = ints(ctx, 1, shape)
    if len(target) != len(dims):
        raise ctx.error(f"shape has {len(target)} entries for {len(dims)} axes")
    out_shape = list(x.shape)
    src, dst = [slice(None)] * rank, [slice(None)] * rank
    for a, t in zip(dims, target):
        n = x.shape[a]
        out_shape[a] = t
        if t < n:  # crop, the extra element (odd difference) cut from the end
            start = (n - t) // 2
            src[a] = slice(start, start + t)
        elif t > n:  # pad with zeros, the extra element added at the end
            start = (t - n) // 2
            dst[a] = slice(start, start + n)
    out = torch.zeros(out_shape, dtype=x.dtype)
    out[tuple(dst)] = x[tuple(src)]
    return out
