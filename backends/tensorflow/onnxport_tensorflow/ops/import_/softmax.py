"""Softmax, LogSoftmax and Hardmax along one axis."""

from __future__ import annotations

import tensorflow as tf

from onnxport import importer


@importer("Softmax", since=13)
def softmax(ctx, x, *, axis):
    return tf.nn.softmax(x, axis=axis)


@importer("LogSoftmax", since=13)
def log_softmax(ctx, x, *, axis):
    return tf.nn.log_softmax(x, axis=axis)


@importer("Hardmax", since=13)
def hardmax(ctx, x, *, axis):
    x = tf.convert_to_tensor(x)
    axis = axis + x.shape.rank if axis < 0 else axis
    n = x.shape[axis]
    if n == 0:
        return x
    first = tf.argmax(x, axis=axis)  # first occurrence of the maximum, as ONNX requires
    return tf.one_hot(first, n if n is not None else tf.shape(x)[axis], dtype=x.dtype, axis=axis)
