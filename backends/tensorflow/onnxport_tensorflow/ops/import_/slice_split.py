"""Slice (ONNX clamping) and Split (static pieces)."""

from __future__ import annotations

import numpy as np
import tensorflow as tf

from onnxport import importer
from onnxport.opmath.slicing import even_split, onnx_slice

from ._static import dim, ints, rank, tensor

_I32 = (1 << 31) - 1


def _clip(v: int) -> int:
    return max(-_I32, min(_I32, v))


def _runtime_slice(ctx, data, starts, ends, axes, steps):
    """Slice with starts/ends/steps known only at run time: a gather of the ONNX-clamped range."""
    data = tensor(data)
    r = rank(data)
    starts = tf.reshape(tf.cast(starts, tf.int64), [-1])
    ends = tf.reshape(tf.cast(ends, tf.int64), [-1])
    k = starts.shape[0]
    if k is None:
        raise ctx.data_dependent("the number of sliced axes")
    axes_ = ints(ctx, 3, axes) if axes is not None else list(range(k))
    steps = tf.ones([k], tf.int64) if steps is None else tf.reshape(tf.cast(steps, tf.int64), [-1])
    for j, a in enumerate(axes_):
        a %= r
        d = tf.shape(data, out_type=tf.int64)[a]
        s, e, st = starts[j], ends[j], steps[j]
        s = tf.where(s < 0, s + d, s)
        e = tf.where(e < 0, e + d, e)
        pos = st > 0
        s = tf.where(pos, tf.clip_by_value(s, 0, d), tf.clip_by_value(s, 0, d - 1))
        e = tf.where(pos, tf.clip_by_value(e, 0, d), tf.clip_by_value(e, -1, d - 1))
        data = tf.gather(data, tf.range(s, e, st), axis=a)
    return data


def _known(ctx, i, x) -> bool:
    return x is None or ctx.const(i) is not None or isinstance(x, np.ndarray) or \
        (hasattr(x, "numpy") and tf.executing_eagerly())


@importer("Slice", since=13)
def slice_(ctx, data, starts, ends, axes=None, steps=None):
    if not all(_known(ctx, i, v) for i, v in ((1, starts), (2, ends), (4, steps))):
        return _runtime_slice(ctx, data, starts, ends, axes, steps)
    starts_ = ints(ctx, 1, starts)
    ends_ = ints(ctx, 2, ends)
    axes_ = ints(ctx, 3, axes) if axes is not None else list(range(len(starts_)))
    steps_ = ints(ctx, 4, steps) if steps is not None else [1] * len(starts_)
    r = rank(data)
    idx = [slice(None)] * r
    for s, e, a, st in zip(starts_, ends_, axes_, steps_):
        if st == 0:
            raise ctx.error("Slice step must not be 0")
        a %= r
        d = data.shape[a]
        if d is None:  # dynamic dim: Python clamping is ONNX clamping
            idx[a] = slice(_clip(s), _clip(e) if not (st < 0 and e < -_I32) else None, st)
        else:
            idx[a] = onnx_slice(int(d), s, e, st)
    return data[tuple(idx)]


def split_sizes(ctx, dim: int, n: int | None, parts: int) -> list[int]:
    """Piece sizes when no explicit split is given: ceil(dim / n) each, the last smaller."""
    with ctx.raising():
        return even_split(dim, n or parts)


@importer("Split", since=18)
def split(ctx, x, split=None, *, axis, num_outputs):
    r = rank(x)
    axis %= r
    d = dim(x, axis)
    if split is not None:
        sizes = ints(ctx, 1, split)
        if isinstance(d, int) and sum(sizes) != d:
            raise ctx.error(f"split sizes {sizes} do not add up to dimension {axis} ({d})")
    elif isinstance(d, int):
        sizes = split_sizes(ctx, d, num_outputs, ctx.num_outputs)
    else:
        n = num_outputs or ctx.num_outputs
        out = tf.split(tensor(x), n, axis=axis)
        return tuple(out) if ctx.num_outputs > 1 else out[0]
    if isinstance(x, np.ndarray):
        out, start = [], 0
        for s in sizes:
            out.append(np.take(x, np.arange(start, start + s), axis=axis))
            start += s
    else:
        out = tf.split(x, sizes, axis=axis)
    return tuple(out) if ctx.num_outputs > 1 else out[0]
