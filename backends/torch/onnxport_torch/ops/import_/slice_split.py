"""Slice (negative steps included) and Split (``split`` input or ``num_outputs``)."""

from __future__ import annotations

import math

import torch

from onnxport import importer

from ...context import ints


def norm_axis(ctx, axis: int, rank: int) -> int:
    """``axis`` in ``[0, rank)``, or a node error."""
    a = axis + rank if axis < 0 else axis
    if not 0 <= a < rank:
        raise ctx.error(f"axis {axis} is out of range for rank {rank}")
    return a


def split_sizes(ctx, n: int, sizes: list[int] | None, parts: int) -> list[int]:
    """Chunk sizes along an axis of length ``n``: given sizes, else ``parts`` chunks of ceil(n/parts)."""
    if sizes is not None:
        if sum(sizes) != n or any(s < 0 for s in sizes):
            raise ctx.error(f"split sizes {sizes} do not add up to the axis length {n}")
        return sizes
    if parts < 1:
        raise ctx.error(f"cannot split into {parts} parts")
    size = math.ceil(n / parts)
    out = [min(size, max(n - size * k, 0)) for k in range(parts)]
    if sum(out) != n:
        raise ctx.error(f"an axis of length {n} cannot be split into {parts} parts")
    return out


@importer("Slice", since=13)
def slice_(ctx, data: torch.Tensor, starts: torch.Tensor, ends: torch.Tensor,
           axes: torch.Tensor | None = None, steps: torch.Tensor | None = None) -> torch.Tensor:
    st, en = ints(ctx, 1, starts), ints(ctx, 2, ends)
    ax = ints(ctx, 3, axes) if axes is not None else list(range(len(st)))
    sp = ints(ctx, 4, steps) if steps is not None else [1] * len(st)
    if not len(st) == len(en) == len(ax) == len(sp):
        raise ctx.error(f"starts/ends/axes/steps lengths differ: {len(st)}, {len(en)}, {len(ax)}, {len(sp)}")
    x = data
    for s, e, a, k in zip(st, en, ax, sp):
        a = norm_axis(ctx, a, data.dim())
        if k == 0:
            raise ctx.error("slice step must not be zero")
        if k > 0 and not (type(s) is int and type(e) is int):
            # symbolic bounds (a shape program under tracing): tensor slicing clamps as ONNX does
            idx = [slice(None)] * x.dim()
            idx[a] = slice(s, e, k)
            x = x[tuple(idx)]
            continue
        # Python's slice clamping is ONNX's: [0, n] for positive steps, [-1, n-1] for negative ones
        lo, hi, step = slice(s, e, k).indices(x.shape[a])
        if step > 0:
            idx = [slice(None)] * x.dim()
            idx[a] = slice(lo, hi, step)
            x = x[tuple(idx)]
        else:
            x = x.index_select(a, torch.arange(lo, hi, step, dtype=torch.int64, device=x.device))
    return x


@importer("Split", since=18)
def split(ctx, x: torch.Tensor, split: torch.Tensor | None = None, *, axis: int,
          num_outputs: int | None) -> torch.Tensor | tuple[torch.Tensor, ...]:
    a = norm_axis(ctx, axis, x.dim())
    sizes = ints(ctx, 1, split) if split is not None else None
    if sizes is not None and len(sizes) != ctx.num_outputs:
        raise ctx.error(f"split has {len(sizes)} sizes for {ctx.num_outputs} outputs")
    if sizes is None and num_outputs is not None and num_outputs != ctx.num_outputs:
        raise ctx.error(f"num_outputs={num_outputs} but the node has {ctx.num_outputs} outputs")
    parts = torch.split(x, split_sizes(ctx, x.shape[a], sizes, ctx.num_outputs), dim=a)
    return parts[0] if ctx.num_outputs == 1 else tuple(parts)
