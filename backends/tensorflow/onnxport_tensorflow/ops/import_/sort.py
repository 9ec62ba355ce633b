"""TopK (stable: equal values keep index order) and Unique (numpy for static values; a
runtime ``tf.unique`` over the flattened input otherwise)."""

from __future__ import annotations

import numpy as np
import tensorflow as tf

from onnxport import importer

from ._static import concrete, is_static, rank, tensor


@importer("TopK", since=24)
def top_k(ctx, x, k, *, axis, largest, sorted):
    x = tensor(x)
    try:
        kk = int(concrete(ctx, 1, k, "k").reshape(-1)[0])
    except Exception:  # noqa: BLE001 - a runtime k
        kk = tf.reshape(tf.cast(k, tf.int32), [])
    axis %= rank(x)
    order = tf.argsort(x, axis=axis, stable=True, direction="DESCENDING" if largest else "ASCENDING")
    idx = tf.gather(order, tf.range(kk), axis=axis)
    vals = tf.gather(x, idx, axis=axis, batch_dims=axis) if axis == rank(x) - 1 else \
        tf.experimental.numpy.take_along_axis(x, idx, axis=axis)
    return vals, tf.cast(idx, tf.int64)


def _np_unique(host, axis, sorted_):
    if axis is None:
        y, first, inverse, counts = np.unique(host.reshape(-1), return_index=True, return_inverse=True,
                                              return_counts=True)
    else:
        axis %= host.ndim
        y, first, inverse, counts = np.unique(host, axis=axis, return_index=True, return_inverse=True,
                                              return_counts=True)
    inverse = inverse.reshape(-1)
    if not sorted_:  # order by first occurrence
        perm = np.argsort(first, kind="stable")
        rk = np.empty_like(perm)
        rk[perm] = np.arange(perm.size)
        y = np.take(y, perm, axis=0 if axis is None else axis)
        first, counts, inverse = first[perm], counts[perm], rk[inverse]
    return tuple(np.asarray(o) for o in (y, first.astype(np.int64), inverse.astype(np.int64),
                                         counts.astype(np.int64)))


@importer("Unique", since=28)
def unique(ctx, x, *, axis, sorted):
    """Y, first-occurrence indices, inverse indices and counts (int64), like numpy.unique."""
    if is_static(x) or hasattr(x, "numpy") and tf.executing_eagerly():
        outs = _np_unique(np.asarray(x), axis, sorted)
    elif axis is None:
        flat = tf.reshape(x, [-1])
        y, inverse, counts = tf.unique_with_counts(flat, out_idx=tf.int64)
        n = tf.shape(y, out_type=tf.int64)[0]
        pos = tf.range(tf.size(flat, out_type=tf.int64))
        first = tf.math.unsorted_segment_min(pos, inverse, n)
        if sorted:
            perm = tf.argsort(y, stable=True)
            rk = tf.math.invert_permutation(perm)
            y, first, counts = tf.gather(y, perm), tf.gather(first, perm), tf.gather(counts, perm)
            inverse = tf.gather(tf.cast(rk, tf.int64), inverse)
        outs = (y, first, inverse, counts)
    else:
        raise ctx.data_dependent("Unique along an axis of a runtime value")
    return outs[: ctx.num_outputs] if ctx.num_outputs > 1 else outs[0]
