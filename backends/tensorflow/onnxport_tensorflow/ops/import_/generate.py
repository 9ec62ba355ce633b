"""Range, EyeLike, OneHot and Trilu."""

from __future__ import annotations

import numpy as np
import tensorflow as tf

from onnxport import importer

from ...budget import within_budget
from ._static import concrete, dims, np_dtype, rank, tensor


@importer("Range", since=27)
def range_(ctx, start, limit, delta, *, stash_type):
    """Element i is ``start + i * delta``; computed in numpy when the bounds are static, else
    with ``tf.range``. float16/bfloat16 compute in float32 when ``stash_type`` is 1."""
    try:
        s, lim, d = (concrete(ctx, i, v, name).reshape(()) for i, (v, name) in
                     enumerate(((start, "start"), (limit, "limit"), (delta, "delta"))))
    except Exception:  # noqa: BLE001 - runtime bounds
        st = tf.reshape(tensor(start), [])
        lim, d = tf.reshape(tf.cast(limit, st.dtype), []), tf.reshape(tf.cast(delta, st.dtype), [])
        f64 = [tf.cast(v, tf.float64) for v in (st, lim, d)]
        with within_budget(ctx, tf.maximum(tf.math.ceil((f64[1] - f64[0]) / f64[2]), 0.0)):
            return tf.cast(tf.range(st, lim, d), st.dtype)
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
    n = int(concrete(ctx, 1, depth, "depth").reshape(-1)[0])
    indices, values = tensor(indices), tensor(values)
    r = rank(indices) + 1
    axis %= r
    idx = tf.cast(indices if indices.dtype.is_integer else tf.math.floor(tf.abs(indices)) * tf.sign(indices),
                  tf.int64)
    idx = tf.where(idx < 0, idx + n, idx)
    pos = tf.reshape(tf.range(n, dtype=tf.int64), [n if i == axis else 1 for i in range(r)])
    hit = tf.expand_dims(idx, axis) == pos
    return tf.where(hit, values[1], values[0])


@importer("Trilu", since=14)
def trilu(ctx, x, k=None, *, upper):
    """``k`` may be a runtime tensor (the kept band is computed from it)."""
    kk = dims(ctx, 1, k) if k is not None else [0]
    kk = kk[0] if isinstance(kk, list) else tf.reshape(kk, [])
    x = tensor(x)
    rows, cols = x.shape[-2], x.shape[-1]
    if rows is None or cols is None:
        sh = tf.shape(x, out_type=tf.int64)
        rows, cols = sh[-2], sh[-1]
    i = tf.range(rows, dtype=tf.int64)[:, None]
    j = tf.range(cols, dtype=tf.int64)[None, :]
    keep = (j - i >= kk) if upper else (j - i <= kk)
    return tf.where(keep, x, tf.zeros((), x.dtype))


@importer("EyeLike", since=22)
def eye_like(ctx, x, *, dtype, k):
    out = np_dtype(dtype, np.dtype(tensor(x).dtype.as_numpy_dtype))
    rows, cols = x.shape
    return np.eye(int(rows), int(cols), k, dtype=out)
