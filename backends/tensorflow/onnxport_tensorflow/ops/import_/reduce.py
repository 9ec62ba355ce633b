"""Reductions over axes (ReduceSum ... ReduceLogSumExp) and ArgMax/ArgMin."""

from __future__ import annotations

import tensorflow as tf

from onnxport import importer

from ._static import ints, rank, tensor


def _axes(ctx, x, axes, noop_with_empty_axes) -> list[int] | None:
    """The axes to reduce; None means "return the input unchanged" (noop_with_empty_axes)."""
    dims = ints(ctx, 1, axes) if axes is not None else []
    r = rank(x)
    if not dims:
        return None if noop_with_empty_axes else list(range(r))
    return sorted({a + r if a < 0 else a for a in dims})


def _float(x):
    return x if x.dtype.is_floating else tf.cast(x, tf.float64 if x.dtype.size == 8 else tf.float32)


def _log_sum_exp(x, a, k):
    xf = _float(x)
    m = tf.reduce_max(xf, axis=a, keepdims=True)
    m = tf.where(tf.math.is_finite(m), m, tf.zeros((), m.dtype))
    out = tf.math.log(tf.reduce_sum(tf.exp(xf - m), axis=a, keepdims=True)) + m
    return out if k else tf.squeeze(out, a)


def _bool_safe(fn):
    def run(x, a, k):
        if x.dtype == tf.bool:
            return fn(tf.cast(x, tf.int32), a, k)
        return fn(x, a, k)
    return run


_REDUCE = {
    "ReduceSum": (13, lambda x, a, k: tf.reduce_sum(x, axis=a, keepdims=k)),
    "ReduceMean": (18, lambda x, a, k: tf.reduce_mean(_float(x), axis=a, keepdims=k)),
    "ReduceMax": (20, _bool_safe(lambda x, a, k: tf.reduce_max(x, axis=a, keepdims=k))),
    "ReduceMin": (20, _bool_safe(lambda x, a, k: tf.reduce_min(x, axis=a, keepdims=k))),
    "ReduceProd": (18, lambda x, a, k: tf.reduce_prod(x, axis=a, keepdims=k)),
    "ReduceL1": (18, lambda x, a, k: tf.reduce_sum(tf.abs(x), axis=a, keepdims=k)),
    "ReduceL2": (18, lambda x, a, k: tf.sqrt(tf.reduce_sum(tf.square(_float(x)), axis=a, keepdims=k))),
    "ReduceLogSum": (28, lambda x, a, k: tf.math.log(tf.reduce_sum(_float(x), axis=a, keepdims=k))),
    "ReduceLogSumExp": (28, _log_sum_exp),
    "ReduceSumSquare": (18, lambda x, a, k: tf.reduce_sum(tf.square(x), axis=a, keepdims=k)),
}


def _reduce(ctx, data, axes=None, *, keepdims, noop_with_empty_axes):
    data = tensor(data)
    axis = _axes(ctx, data, axes, noop_with_empty_axes)
    if axis is None:
        return data
    out = _REDUCE[ctx.op_type][1](data, axis, bool(keepdims))
    return tf.cast(out, data.dtype)


for _op, (_since, _) in _REDUCE.items():
    _reduce = importer(_op, since=_since)(_reduce)


@importer("ArgMax", since=13)
@importer("ArgMin", since=13)
def arg_extreme(ctx, data, *, axis, keepdims, select_last_index):
    data = tensor(data)
    axis = axis + rank(data) if axis < 0 else axis
    fn = tf.argmax if ctx.op_type == "ArgMax" else tf.argmin
    if data.dtype == tf.bool:
        data = tf.cast(data, tf.int32)
    if select_last_index:
        n = tf.shape(data, out_type=tf.int64)[axis]
        idx = (n - 1) - fn(tf.reverse(data, [axis]), axis=axis, output_type=tf.int64)
    else:
        idx = fn(data, axis=axis, output_type=tf.int64)
    return tf.expand_dims(idx, axis) if keepdims else idx
