"""MatMulInteger, QLinearMatMul and QLinearConv: exact integer accumulation (float64 holds every
int32 product sum of these sizes exactly), then requantization
``round(acc * (scale_a * scale_b / scale_y)) + zero_y`` saturated to the output type."""

from __future__ import annotations

import tensorflow as tf

from onnxport import importer

from ._static import rank, tensor
from .conv import conv_values


def _shift(x, zp, axis=None):
    """``x - zero_point`` as exact float64; a 1-D zero point applies along ``axis``."""
    v = tf.cast(x, tf.float64)
    if zp is None:
        return v
    z = tf.cast(zp, tf.float64)
    if z.shape.rank == 1 and z.shape[0] > 1:
        shape = [1] * rank(v)
        shape[axis % rank(v)] = -1
        z = tf.reshape(z, shape)
    return v - z


def _requantize(acc, multiplier, y_zero_point, out_dtype):
    r = tf.cast(acc, tf.float32) * multiplier
    if y_zero_point is not None:
        r = r + tf.cast(y_zero_point, tf.float32)
    return tf.cast(tf.clip_by_value(tf.round(r), out_dtype.min, out_dtype.max), out_dtype)


@importer("MatMulInteger", since=10)
def matmul_integer(ctx, a, b, a_zero_point=None, b_zero_point=None):
    """(A - a_zero) @ (B - b_zero) in int32; per-row / per-column zero points allowed."""
    av = _shift(a, a_zero_point, axis=-2 if rank(a) > 1 else -1)
    bv = _shift(b, b_zero_point, axis=-1)
    return tf.cast(tf.linalg.matmul(av, bv), tf.int32)


@importer("QLinearMatMul", since=21)
def qlinear_matmul(ctx, a, a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale, y_zero_point=None):
    acc = tf.linalg.matmul(_shift(a, a_zero_point, axis=-2), _shift(b, b_zero_point, axis=-1))
    mult = tf.cast(a_scale, tf.float32) * tf.cast(b_scale, tf.float32) / tf.cast(y_scale, tf.float32)
    if mult.shape.rank == 1 and mult.shape[0] > 1:  # per output column
        mult = tf.reshape(mult, [1] * (rank(acc) - 1) + [-1])
    out = tensor(y_zero_point).dtype if y_zero_point is not None else tensor(a).dtype
    return _requantize(acc, mult, y_zero_point, out)


@importer("QLinearConv", since=10)
def qlinear_conv(ctx, x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale, y_zero_point=None,
                 b=None, *, auto_pad, dilations, group, kernel_shape, pads, strides):
    nd = rank(w) - 2
    xi = _shift(x, x_zero_point)
    wi = _shift(w, w_zero_point, axis=0)
    acc = conv_values(xi, wi, None, auto_pad=auto_pad, dilations=dilations, group=group,
                      kernel_shape=kernel_shape, pads=pads, strides=strides)
    if b is not None:
        acc = acc + tf.reshape(tf.cast(b, tf.float64), [1, -1] + [1] * nd)
    ws = tf.cast(w_scale, tf.float32)
    if ws.shape.rank == 1 and ws.shape[0] > 1:
        ws = tf.reshape(ws, [1, -1] + [1] * nd)
    mult = tf.cast(x_scale, tf.float32) * ws / tf.cast(y_scale, tf.float32)
    out = tensor(y_zero_point).dtype if y_zero_point is not None else tensor(x).dtype
    return _requantize(acc, mult, y_zero_point, out)
