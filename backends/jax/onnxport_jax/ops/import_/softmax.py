"""Softmax, LogSoftmax and Hardmax along one axis."""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax import lax

from onnxport import importer


@importer("Softmax", since=13)
def softmax(ctx, x, *, axis):
    if x.size == 0:
        return jax.nn.softmax(x, axis=axis)
    # XLA may fuse x's producer into x - max(x) and contract it (FMA), so x - max(x) can come out
    # positive by the rounding error of x (for logits near 1e10, exp overflows to NaN); shifting
    # by the max of the difference itself is exact, whatever the fusion
    d = x - lax.stop_gradient(jnp.max(x, axis=axis, keepdims=True))
    d = d - lax.stop_gradient(jnp.max(d, axis=axis, keepdims=True))
    e = jnp.exp(d)
    return e / jnp.sum(e, axis=axis, keepdims=True)


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
