"""TopK (stable: equal values keep index order) and Unique (data-dependent, eager only)."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from onnxport import importer

from ._static import concrete, is_static


@importer("TopK", since=24)
def top_k(ctx, x, k, *, axis, largest, sorted):
    kk = int(concrete(ctx, 1, k, "k").reshape(-1)[0])
    axis %= x.ndim
    order = jnp.argsort(x, axis=axis, stable=True, descending=bool(largest))
    idx = jnp.take(order, jnp.arange(kk), axis=axis)
    vals = jnp.take_along_axis(jnp.asarray(x), idx, axis=axis)
    idx = idx.astype(np.int64)
    if is_static(x):
        return np.asarray(vals), np.asarray(idx)
    return vals, idx


@importer("Unique", since=28)
def unique(ctx, x, *, axis, sorted):
    """Y, first-occurrence indices, inverse indices and counts (int64), like numpy.unique."""
    host = np.asarray(x) if is_static(x) else ctx.concrete(x, "the number of unique values")
    if axis is None:
        flat = host.reshape(-1)
        y, first, inverse, counts = np.unique(flat, return_index=True, return_inverse=True,
                                              return_counts=True)
    else:
        axis %= host.ndim
        y, first, inverse, counts = np.unique(host, axis=axis, return_index=True,
                                              return_inverse=True, return_counts=True)
    inverse = inverse.reshape(-1)
    if not sorted:  # order by first occurrence
        perm = np.argsort(first, kind="stable")
        rank = np.empty_like(perm)
        rank[perm] = np.arange(perm.size)
        y = np.take(y, perm, axis=0 if axis is None else axis)
        first, counts, inverse = first[perm], counts[perm], rank[inverse]
    outs = tuple(np.asarray(o) for o in (y, first.astype(np.int64), inverse.astype(np.int64),
                                         counts.astype(np.int64)))
    if not is_static(x):
        outs = tuple(jnp.asarray(o) for o in outs)
    return outs[: ctx.num_outputs] if ctx.num_outputs > 1 else outs[0]
