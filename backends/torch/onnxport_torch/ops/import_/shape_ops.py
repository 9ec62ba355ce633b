"""Shape and layout: Reshape, Flatten, Transpose, Squeeze, Unsqueeze, Concat, Identity, Shape,
Size, Expand, Tile."""

from __future__ import annotations

import math

import torch

from onnxport import importer

from ...context import ints


def _axis(ctx, axis: int, rank: int) -> int:
    """A non-negative axis in ``[0, rank)``."""
    a = axis + rank if axis < 0 else axis
    if not 0 <= a < max(rank, 1):
        raise ctx.error(f"axis {axis} is out of range for rank {rank}")
    return a


@importer("Reshape", since=25)
def reshape(ctx, data: torch.Tensor, shape: torch.Tensor, *, allowzero: int) -> torch.Tensor:
    dims = ints(ctx, 1, shape)
    if not allowzero:
        if any(d == 0 for d in dims[data.dim():]):
            raise ctx.error(f"shape {dims} copies a dimension that the rank-{data.dim()} input lacks")
        dims = [data.shape[i] if d == 0 else d for i, d in enumerate(dims)]
    return torch.reshape(data, dims)


@importer("Flatten", since=25)
def flatten(ctx, x: torch.Tensor, *, axis: int) -> torch.Tensor:
    axis = axis + x.dim() if axis < 0 else axis
    if not 0 <= axis <= x.dim():
        raise ctx.error(f"axis {axis} is out of range for rank {x.dim()}")
    return x.reshape(math.prod(x.shape[:axis]), math.prod(x.shape[axis:]))


@importer("Transpose", since=25)
def transpose(ctx, x: torch.Tensor, *, perm: list[int] | None) -> torch.Tensor:
    perm = perm if perm is not None else list(reversed(range(x.dim())))
    return x.permute(perm)


@importer("Unsqueeze", since=25)
def unsqueeze(ctx, x: torch.Tensor, axes: torch.Tensor) -> torch.Tensor:
    dims = ints(ctx, 1, axes)
    rank = x.dim() + len(dims)
    for a in sorted(_axis(ctx, a, rank) for a in dims):
        x = x.unsqueeze(a)
    return x


@importer("Squeeze", since=25)
def squeeze(ctx, x: torch.Tensor, axes: torch.Tensor | None = None) -> torch.Tensor:
    if axes is None:
        return x.squeeze() if x.dim() else x
    dims = [_axis(ctx, a, x.dim()) for a in ints(ctx, 1, axes)]
    bad = [d for d in dims if x.shape[d] != 1]
    if bad:
        raise ctx.error(f"cannot squeeze axes {bad} of shape {list(x.shape)}: size is not 1")
    return x.squeeze(dims) if dims else x


@importer("Concat", since=13)
def concat(ctx, *xs: torch.Tensor, axis: int) -> torch.Tensor:
    return torch.cat(xs, dim=axis)


@importer("Identity", since=25)
def identity(ctx, x):
    """Tensors, sequences and optionals pass through unchanged."""
    return x


@importer("Shape", since=25)
def shape(ctx, x: torch.Tensor, *, end: int | None, start: int) -> torch.Tensor:
    return torch.tensor(list(x.shape)[start:end], dtype=torch.int64)


@importer("Expand", since=13)
def expand(ctx, x: torch.Tensor, shape: torch.Tensor) -> torch.Tensor:
    dims = ints(ctx, 1, shape)
    out = torch.broadcast_shapes(tuple(x.shape), tuple(dims))
    return x.expand(out)


@importer("Tile", since=13)
def tile(ctx, x: torch.Tensor, repeats: torch.Tensor) -> torch.Tensor:
    reps = ints(ctx, 1, repeats)
    if len(reps) != x.dim():
        raise ctx.error(f"repeats has {len(reps)} entries for a rank-{x.dim()} input")
    return x.repeat(reps) if reps else x.clone()


@importer("Size", since=25)
def size(ctx, x: torch.Tensor) -> torch.Tensor:
    """The element count of ``x`` as an int64 scalar."""
    return torch.tensor(x.numel(), dtype=torch.int64)
