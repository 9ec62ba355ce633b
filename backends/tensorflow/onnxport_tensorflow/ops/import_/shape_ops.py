"""Reshape, Flatten, Transpose, Unsqueeze, Squeeze, Concat, Identity, Shape, Size, Expand, Tile.

Shape and Size return numpy arrays when the input's shape is static, so shape-computing
subgraphs fold; with dynamic dims they return int64 tensors and the shape ops take them.
"""

from __future__ import annotations

import math

import numpy as np
import tensorflow as tf

from onnxport import importer
from onnxport.importing.layout import NHWC_TO_NCHW

from ...budget import product, within_budget
from ._static import dims, ints, rank, shape_of, tensor


def _static(*xs) -> bool:
    return all(isinstance(x, (np.ndarray, np.generic)) for x in xs)


@importer("Reshape", since=25)
def reshape(ctx, data, shape, *, allowzero):
    target = dims(ctx, 1, shape)
    if _static(data) and isinstance(target, list):
        if not allowzero:
            target = [data.shape[i] if d == 0 else d for i, d in enumerate(target)]
        return np.reshape(data, target)
    data = tensor(data)
    if isinstance(target, list):
        if not allowzero and 0 in target:
            src = shape_of(data)
            if isinstance(src, np.ndarray) or all(data.shape[i] is not None for i, d in enumerate(target) if d == 0):
                target = [int(data.shape[i]) if d == 0 else d for i, d in enumerate(target)]
            else:
                target = tf.stack([src[i] if d == 0 else tf.constant(d, tf.int64) for i, d in enumerate(target)])
        return tf.reshape(data, target)
    if not allowzero:
        src = tf.shape(data, out_type=tf.int64)
        n = tf.size(target)
        pad = tf.concat([src, tf.ones([tf.maximum(n - tf.size(src), 0)], tf.int64)], 0)[:n]
        target = tf.where(target == 0, pad, target)
    return tf.reshape(data, target)


@reshape.channels_last(form="shuffle")
def channel_shuffle_nhwc(ctx, x, shape, *, groups, **attrs):
    """A channel shuffle (this Reshape to [N, g, C/g, H, W], Transpose 1<->2, Reshape back) on NHWC."""
    c = x.shape[-1]
    shape = tf.shape(x)
    y = tf.reshape(x, tf.concat([shape[:3], [groups, c // groups]], 0))
    return tf.reshape(tf.transpose(y, [0, 1, 2, 4, 3]), shape)


@importer("Flatten", since=25)
def flatten(ctx, x, *, axis):
    r = rank(x)
    axis = axis + r if axis < 0 else axis
    if _static(x):
        return np.reshape(x, (math.prod(x.shape[:axis]), math.prod(x.shape[axis:])))
    s = x.shape.as_list()
    if None not in s[:axis]:
        return tf.reshape(x, [math.prod(s[:axis]), -1])
    if None not in s[axis:]:
        return tf.reshape(x, [-1, math.prod(s[axis:])])
    sh = tf.shape(x)
    return tf.reshape(x, tf.stack([tf.reduce_prod(sh[:axis]), tf.reduce_prod(sh[axis:])]))


@importer("Transpose", since=25)
def transpose(ctx, x, *, perm):
    perm = perm if perm is not None else list(reversed(range(rank(x))))
    if _static(x):
        return np.transpose(x, perm)
    return tf.transpose(x, perm)


@transpose.channels_last
def transpose_from_nhwc(ctx, x, *, perm):
    """A Transpose of an NHWC value: one transpose by the composed permutation (``perm`` applied to
    the NCHW view), instead of converting back first."""
    perm = list(perm) if perm is not None else [3, 2, 1, 0]
    return tf.transpose(x, [NHWC_TO_NCHW[p] for p in perm])


@importer("Unsqueeze", since=25)
def unsqueeze(ctx, x, axes):
    axes = ints(ctx, 1, axes)
    r = rank(x) + len(axes)
    axes = sorted(a + r if a < 0 else a for a in axes)
    if len(set(axes)) != len(axes) or any(not 0 <= a < r for a in axes):
        raise ctx.error(f"invalid axes {axes} for output rank {r}")
    if _static(x):
        return np.expand_dims(x, tuple(axes))
    for a in axes:
        x = tf.expand_dims(x, a)
    return x


@importer("Squeeze", since=25)
def squeeze(ctx, x, axes=None):
    if not isinstance(x, np.ndarray) and x.shape.rank is None:  # a loop value of unknown rank
        return tf.squeeze(x) if axes is None else tf.squeeze(x, ints(ctx, 1, axes))
    r = rank(x)
    if axes is None:
        return np.squeeze(x) if _static(x) else tf.squeeze(x)
    axs = tuple(a + r if a < 0 else a for a in ints(ctx, 1, axes))
    bad = [a for a in axs if x.shape[a] is not None and x.shape[a] != 1]
    if bad:
        raise ctx.error(f"cannot squeeze axes {bad} of shape {tuple(x.shape)}: size is not 1")
    if not axs:
        return x
    return np.squeeze(x, axs) if _static(x) else tf.squeeze(x, list(axs))


@importer("Concat", since=13)
def concat(ctx, *xs, axis):
    if _static(*xs):
        return np.concatenate(xs, axis=axis)
    return tf.concat([tensor(x) for x in xs], axis=axis)


@concat.channels_last
def concat_nhwc(ctx, *xs, axis):
    """Concat on channels (``axis`` 1) of NHWC values."""
    return tf.concat([tf.convert_to_tensor(x) for x in xs], axis=3)


@importer("Identity", since=25)
def identity(ctx, x):
    return x


@importer("Shape", since=25)
def shape(ctx, x, *, end, start):
    s = shape_of(x)
    r = rank(x)
    start = max(0, min(r, start + r if start < 0 else start))
    end = r if end is None else max(0, min(r, end + r if end < 0 else end))
    if not isinstance(s, np.ndarray):
        known = x.shape.as_list()[start:end]
        if None not in known:
            return np.asarray(known, dtype=np.int64)
    return s[start:end]


@importer("Size", since=25)
def size(ctx, x):
    s = shape_of(x)
    if isinstance(s, np.ndarray):
        return np.asarray(math.prod(int(d) for d in s), dtype=np.int64)
    return tf.size(x, out_type=tf.int64)


@importer("Expand", since=13)
def expand(ctx, x, shape):
    target = dims(ctx, 1, shape)
    if not isinstance(target, list):
        x = tensor(x)
        out_shape = tf.broadcast_dynamic_shape(tf.shape(x, out_type=tf.int64), target)
        with within_budget(ctx, product(out_shape)):
            return x * tf.ones(target, x.dtype) if x.dtype != tf.bool else tf.logical_and(x, tf.ones(target, tf.bool))
    r = max(len(target), rank(x))
    target = [1] * (r - len(target)) + target
    have = [1] * (r - rank(x)) + list(x.shape)
    out = []
    for d, h in zip(target, have):
        if h is not None and d != h and d != 1 and h != 1:
            raise ctx.error(f"cannot broadcast shape {tuple(x.shape)} to {tuple(target)}")
        out.append(h if d == 1 else d)
    if _static(x):
        return np.broadcast_to(x, tuple(out)).copy()
    if None in out:
        x = tensor(x)
        return tf.broadcast_to(x, tf.broadcast_dynamic_shape(tf.shape(x, out_type=tf.int64),
                                                             tf.constant(target, tf.int64)))
    return tf.broadcast_to(x, out)


@importer("Tile", since=13)
def tile(ctx, x, repeats):
    reps = dims(ctx, 1, repeats)
    if isinstance(reps, list) and len(reps) != rank(x):
        raise ctx.error(f"repeats has {len(reps)} entries for an input of rank {rank(x)}")
    if _static(x) and isinstance(reps, list):
        return np.tile(x, reps)
    x = tensor(x)
    if isinstance(reps, list):
        return tf.tile(x, reps)
    with within_budget(ctx, product(tf.shape(x, out_type=tf.int64) * reps)):
        return tf.tile(x, reps)
