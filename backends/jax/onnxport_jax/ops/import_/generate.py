"""Range, EyeLike, OneHot and Trilu."""

from __future__ import annotations

import numpy as np

from onnxport import importer

from ._static import concrete, ints, np_dtype, xp


@importer("Range", since=27)
def range_(ctx, start, limit, delta, *, stash_type):
    """Computed in numpy (static shape); element i is ``start + i * delta``. float16/bfloat16
    compute in float32 when ``stash_type`` is 1 and cast back."""
    s, lim, d = (concrete(ctx, i, v, name).reshape(()) for i, (v, name) in
                 enumerate(((start, "start"), (limit, "limit"), (delta, "delta"))))
    dtype = s.dtype
    if stash_type == 1 and dtype.itemsize < 4 and (dtype.kind == "f" or dtype.name == "bfloat16"):
        s, lim, d = (v.astype(np.float32) for v in (s, lim, d))
    if d == 0:
        raise ctx.error("Range delta must not be 0")
    if np.issubdtype(dtype, np.integer):
        n = max(-((int(s) - int(lim)) // int(d)), 0)  # exact ceil((limit - start) / delta)
    else:
        n = max(int(np.ceil((lim - s) / d)), 0)
    return (s + np.arange(n).astype(s.dtype) * d).astype(dtype)


@importer("OneHot", since=28)
def one_hot(ctx, indices, depth, values, *, axis):
    depth_ = concrete(ctx, 1, depth, "depth").reshape(-1)[0]
    n = int(depth_)
    m = xp(indices, values)
    rank = indices.ndim + 1
    axis %= rank
    idx = indices.astype(np.int64) if m is np else indices
    if not np.issubdtype(np.dtype(indices.dtype), np.integer):
        idx = m.trunc(indices).astype(np.int64)
    idx = m.where(idx < 0, idx + n, idx)
    pos = m.arange(n).reshape([n if i == axis else 1 for i in range(rank)])
    hit = m.expand_dims(idx, axis) == pos
    return m.where(hit, values[1], values[0]).astype(values.dtype)


@importer("Trilu", since=14)
def trilu(ctx, x, k=None, *, upper):
    kk = ints(ctx, 1, k)[0] if k is not None else 0
    m = xp(x)
    return m.triu(x, kk) if upper else m.tril(x, kk)


@importer("EyeLike", since=22)
def eye_like(ctx, x, *, dtype, k):
    out = np_dtype(dtype, x.dtype)
    rows, cols = x.shape
    return xp(x).eye(rows, cols, k, dtype=out)
