"""Reshape, Flatten, Transpose, Unsqueeze, Squeeze, Concat, Identity."""

from __future__ import annotations

import torch

from onnxport import importer

from ...context import ints


@importer("Reshape", since=25)
def reshape(ctx, data, shape, *, allowzero):
    dims = ints(ctx, 1, shape)
    if not allowzero:
        dims = [data.shape[i] if d == 0 else d for i, d in enumerate(dims)]
    return torch.reshape(data, dims)


@importer("Flatten", since=25)
def flatten(ctx, x, *, axis):
    axis = axis + x.dim() if axis < 0 else axis
    lead = 1
    for d in x.shape[:axis]:
        lead *= d
    return x.reshape(lead, -1) if x.numel() or lead else x.reshape(lead, 0)


@importer("Transpose", since=25)
def transpose(ctx, x, *, perm):
    perm = perm if perm is not None else list(reversed(range(x.dim())))
    return x.permute(perm)


@importer("Unsqueeze", since=25)
def unsqueeze(ctx, x, axes):
    axes = ints(ctx, 1, axes)
    rank = x.dim() + len(axes)
    for a in sorted(a + rank if a < 0 else a for a in axes):
        x = x.unsqueeze(a)
    return x


@importer("Squeeze", since=25)
def squeeze(ctx, x, axes=None):
    if axes is None:
        return x.squeeze() if x.dim() else x
    dims = [a + x.dim() if a < 0 else a for a in ints(ctx, 1, axes)]
    return x.squeeze(dims) if dims else x


@importer("Concat", since=13)
def concat(ctx, *xs, axis):
    return torch.cat(xs, dim=axis)


@importer("Identity", since=25)
def identity(ctx, x):
    return x


@importer("Shape", since=25)
def shape(ctx, x, *, end, start):
    dims = list(x.shape)[start:end]
    return torch.tensor(dims, dtype=torch.int64)
