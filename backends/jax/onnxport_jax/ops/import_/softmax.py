"""Softmax, LogSoftmax and Hardmax along one axis."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from onnxport import importer


@importer("Softmax", since=13)
def softmax(ctx, x, *, axis):
    return jax.nn.softmax(x, axis=axis)


@importer("LogSoftmax", since=13)
def log_softmax(ctx, x, *, axis):
    return jax.nn.log_softmax(x, axis=axis)


@importer("Hardmax", since=13)
def hardmax(ctx, x, *, axis):
    axis = axis + x.ndim if axis < 0 else axis
    if x.shape[axis] == 0:
        return x
    first = jnp.argmax(x, axis=axis)  # first occurrence of the maximum, as ONNX requires
    hot = jax.nn.one_hot(first, x.shape[axis], dtype=x.dtype, axis=axis)
    return hot
