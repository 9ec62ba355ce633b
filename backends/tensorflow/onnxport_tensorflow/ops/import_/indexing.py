"""Gather, GatherElements, GatherND, Where, Compress, NonZero and ReverseSequence.

Negative indices wrap as ONNX defines. Compress and NonZero have data-dependent output shapes,
which a traced TensorFlow graph holds as dynamic dims.
"""

from __future__ import annotations

import numpy as np
import tensorflow as tf

from onnxport import importer

from ._static import rank, tensor


def _static(*xs) -> bool:
    return all(isinstance(x, (np.ndarray, np.generic)) for x in xs)


def _wrap(idx, dim):
    idx = tensor(idx)
    dim = tf.cast(dim, idx.dtype)
    return tf.where(idx < 0, idx + dim, idx)


def _dim(x, axis):
    d = x.shape[axis]
    return d if d is not None else tf.shape(x, out_type=tf.int64)[axis]


@importer("Gather", since=13)
def gather(ctx, data, indices, *, axis):
    axis %= rank(data)
    if _static(data, indices):
        idx = np.where(indices < 0, indices + data.shape[axis], indices)
        return np.take(data, idx, axis=axis)
    data = tensor(data)
    return tf.gather(data, _wrap(indices, _dim(data, axis)), axis=axis)


@importer("GatherElements", since=13)
def gather_elements(ctx, data, indices, *, axis):
    data = tensor(data)
    axis %= rank(data)
    idx = _wrap(indices, _dim(data, axis))
    return tf.experimental.numpy.take_along_axis(data, idx, axis=axis)


@importer("GatherND", since=13)
def gather_nd(ctx, data, indices, *, batch_dims):
    data, indices = tensor(data), tensor(indices)
    k = indices.shape[-1]
    sizes = tf.cast(tf.shape(data)[batch_dims:batch_dims + k], indices.dtype)
    idx = tf.where(indices < 0, indices + sizes, indices)
    return tf.gather_nd(data, idx, batch_dims=batch_dims)


@importer("Where", since=16)
def where(ctx, condition, x, y):
    if _static(condition, x, y):
        return np.where(condition, x, y)
    return tf.where(tensor(condition), tensor(x), tensor(y))


@importer("Compress", since=28)
def compress(ctx, x, condition, *, axis):
    x = tensor(x)
    cond = tf.reshape(tf.cast(condition, tf.bool), [-1])
    if axis is None:
        x, axis = tf.reshape(x, [-1]), 0
    axis %= rank(x)
    n = _dim(x, axis)
    cond = cond[:n] if isinstance(n, int) else cond[:n]
    keep = tf.where(cond)[:, 0]
    return tf.gather(x, keep, axis=axis)


@importer("NonZero", since=13)
def non_zero(ctx, x):
    if _static(x):
        return np.array(np.nonzero(x), dtype=np.int64).reshape(np.ndim(x), -1)
    x = tensor(x)
    if rank(x) == 0:
        return tf.reshape(tf.zeros([tf.cast(x != 0, tf.int32)], tf.int64), [0, -1])
    return tf.transpose(tf.where(x != tf.zeros((), x.dtype)))


@importer("ReverseSequence", since=28)
def reverse_sequence(ctx, x, sequence_lens, *, batch_axis, time_axis):
    return tf.reverse_sequence(tensor(x), tf.cast(sequence_lens, tf.int64), seq_axis=time_axis, batch_axis=batch_axis)
