"""Reshape, Flatten, Transpose, Unsqueeze, Squeeze, Concat, Identity, Shape, Size, Expand, Tile.

Shapes, axes and repeats are read as static values (numpy under ``jax.jit``); Shape and Size
return numpy arrays, so shape-computing subgraphs stay static.
"""

from __future__ import annotations

import math

import jax.numpy as jnp
import numpy as np

from onnxport import importer

from ...context import ints


def _xp(*xs):
    """numpy when every input is static, else jax.numpy (static shape arithmetic stays numpy)."""
    return np if all(isinstance(x, (np.ndarray, np.generic)) for x in xs) else jnp


@importer("Reshape", since=25)
def reshape(ctx, data, shape, *, allowzero):
    dims = ints(ctx, 1, shape)
    if not allowzero:
        dims = [data.shape[i] if d == 0 else d for i, d in enumerate(dims)]
    return _xp(data).reshape(data, dims)


@reshape.channels_last(form="shuffle")
def channel_shuffle_nhwc(ctx, x, shape, *, groups, **attrs):
    """A channel shuffle (this Reshape to [N, g, C/g, H, W], Transpose 1<->2, Reshape back) on NHWC."""
    *lead, c = x.shape
    return x.reshape(*lead, groups, c // groups).swapaxes(-1, -2).reshape(x.shape)


@importer("Flatten", since=25)
def flatten(ctx, x, *, axis):
    axis = axis + x.ndim if axis < 0 else axis
    lead = math.prod(x.shape[:axis])
    rest = math.prod(x.shape[axis:])
    return _xp(x).reshape(x, (lead, rest))


@importer("Transpose", since=25)
def transpose(ctx, x, *, perm):
    perm = perm if perm is not None else list(reversed(range(x.ndim)))
    return _xp(x).transpose(x, perm)


@importer("Unsqueeze", since=25)
def unsqueeze(ctx, x, axes):
    axes = ints(ctx, 1, axes)
    rank = x.ndim + len(axes)
    axes = sorted(a + rank if a < 0 else a for a in axes)
    if len(set(axes)) != len(axes) or any(not 0 <= a < rank for a in axes):
        raise ctx.error(f"invalid axes {axes} for output rank {rank}")
    return _xp(x).expand_dims(x, tuple(axes))


@importer("Squeeze", since=25)
def squeeze(ctx, x, axes=None):
    xp = _xp(x)
    if axes is None:
        return xp.squeeze(x)
    dims = tuple(a + x.ndim if a < 0 else a for a in ints(ctx, 1, axes))
    bad = [a for a in dims if x.shape[a] != 1]
    if bad:
        raise ctx.error(f"cannot squeeze axes {bad} of shape {tuple(x.shape)}: size is not 1")
    return xp.squeeze(x, dims) if dims else x


#: operands joined by one concatenation at most: more are joined in groups of this many, then the
#: groups' results, and so on. Called eagerly, one XLA concatenation of n operands compiles in
#: time growing faster than n (10,000 one-element operands: about 13 s); groups of the same
#: shapes reuse one compiled concatenation (see benchmarks/bench_graph_scale.py)
CONCAT_GROUP = 64


def _concatenate(xs, axis):
    """``jnp.concatenate`` of many operands, in groups of at most :data:`CONCAT_GROUP`."""
    xs = list(xs)
    if len(xs) > CONCAT_GROUP:
        # one result type for the whole tree, as one concatenation would promote them
        dtype = jnp.result_type(*xs)
        while len(xs) > CONCAT_GROUP:
            xs = [g[0] if len(g) == 1 else jnp.concatenate(g, axis=axis, dtype=dtype)
                  for g in (xs[i:i + CONCAT_GROUP] for i in range(0, len(xs), CONCAT_GROUP))]
        return jnp.concatenate(xs, axis=axis, dtype=dtype)
    return jnp.concatenate(xs, axis=axis)


@importer("Concat", since=13)
def concat(ctx, *xs, axis):
    xp = _xp(*xs)
    return np.concatenate(xs, axis=axis) if xp is np else _concatenate(xs, axis)


@concat.channels_last
def concat_nhwc(ctx, *xs, axis):
    """Concat on channels (``axis`` 1) of NHWC values."""
    return _concatenate(xs, 3)


@importer("Identity", since=25)
def identity(ctx, x):
    return x


@importer("Shape", since=25)
def shape(ctx, x, *, end, start):
    dims = list(np.shape(x))
    return np.asarray(dims[start:end], dtype=np.int64)


@importer("Size", since=25)
def size(ctx, x):
    return np.asarray(math.prod(np.shape(x)), dtype=np.int64)


@importer("Expand", since=13)
def expand(ctx, x, shape):
    dims = ints(ctx, 1, shape)
    rank = max(len(dims), x.ndim)
    dims = [1] * (rank - len(dims)) + dims
    have = [1] * (rank - x.ndim) + list(x.shape)
    out = []
    for d, h in zip(dims, have):
        if d != h and d != 1 and h != 1:
            raise ctx.error(f"cannot broadcast shape {tuple(x.shape)} to {tuple(dims)}")
        out.append(h if d == 1 else d)
    return _xp(x).broadcast_to(x, tuple(out))


@importer("Tile", since=13)
def tile(ctx, x, repeats):
    reps = ints(ctx, 1, repeats)
    if len(reps) != x.ndim:
        raise ctx.error(f"repeats has {len(reps)} entries for an input of rank {x.ndim}")
    return _xp(x).tile(x, reps)
