"""Bitwise Not/And/Or/Xor and BitShift on integer tensors."""

from __future__ import annotations

import tensorflow as tf

from onnxport import importer

from ._static import tensor


@importer("BitwiseNot", since=18)
def bitwise_not(ctx, x):
    return tf.bitwise.invert(tensor(x))


_BITWISE = {"BitwiseAnd": tf.bitwise.bitwise_and, "BitwiseOr": tf.bitwise.bitwise_or,
            "BitwiseXor": tf.bitwise.bitwise_xor}


@importer("BitwiseAnd", since=18)
@importer("BitwiseOr", since=18)
@importer("BitwiseXor", since=18)
def bitwise(ctx, a, b):
    a, b = tensor(a), tensor(b)
    shape = tf.broadcast_dynamic_shape(tf.shape(a), tf.shape(b))
    return _BITWISE[ctx.op_type](tf.broadcast_to(a, shape), tf.broadcast_to(b, shape))


@importer("BitShift", since=28)
def bit_shift(ctx, x, y, *, direction):
    if direction not in ("LEFT", "RIGHT"):
        raise ctx.error(f"direction must be 'LEFT' or 'RIGHT', got {direction!r}")
    x = tensor(x)
    y = tf.cast(y, x.dtype)
    shape = tf.broadcast_dynamic_shape(tf.shape(x), tf.shape(y))
    x, y = tf.broadcast_to(x, shape), tf.broadcast_to(y, shape)
    bits = x.dtype.size * 8
    zero = tf.zeros((), x.dtype)
    invalid = ((y < zero) | (y >= bits)) if not x.dtype.is_unsigned else y >= bits
    safe = tf.where(invalid, zero, y)
    if direction == "LEFT":
        return tf.where(invalid, zero, tf.bitwise.left_shift(x, safe))
    fill = tf.where(x < zero, tf.constant(-1, x.dtype), zero) if not x.dtype.is_unsigned else zero
    return tf.where(invalid, fill, tf.bitwise.right_shift(x, safe))
