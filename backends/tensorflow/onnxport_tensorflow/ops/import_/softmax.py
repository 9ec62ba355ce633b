"""Softmax, LogSoftmax and Hardmax along one axis."""

from __future__ import annotations

import tensorflow as tf

from onnxport import importer


def _last(x, axis) -> bool:
    return axis in (-1, len(x.shape) - 1)


@importer("Softmax", since=13)
def softmax(ctx, x, *, axis):
    x = tf.convert_to_tensor(x)
    if _last(x, axis):
        return tf.nn.softmax(x)
    # another axis: reduce along it directly (tf.nn.softmax would transpose it last and back)
    e = tf.exp(x - tf.stop_gradient(tf.reduce_max(x, axis=axis, keepdims=True)))
    return e / tf.reduce_sum(e, axis=axis, keepdims=True)


@importer("LogSoftmax", since=13)
def log_softmax(ctx, x, *, axis):
    x = tf.convert_to_tensor(x)
    if _last(x, axis):
        return tf.nn.log_softmax(x)
    d = x - tf.stop_gradient(tf.reduce_max(x, axis=axis, keepdims=True))
    return d - tf.math.log(tf.reduce_sum(tf.exp(d), axis=axis, keepdims=True))


@importer("Hardmax", since=13)
def hardmax(ctx, x, *, axis):
    x = tf.convert_to_tensor(x)
    axis = axis + x.shape.rank if axis < 0 else axis
    n = x.shape[axis]
    if n == 0:
        return x
    first = tf.argmax(x, axis=axis)  # first occurrence of the maximum, as ONNX requires
    return tf.one_hot(first, n if n is not None else tf.shape(x)[axis], dtype=x.dtype, axis=axis)
