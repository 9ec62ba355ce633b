"""QuantizeLinear, DequantizeLinear (per tensor, per axis, blocked; integer types) and
DynamicQuantizeLinear. TensorFlow has no 4/2-bit integer or float8/float4 tensors: those types
work only for values known at import time."""

from __future__ import annotations

import numpy as np
import tensorflow as tf

from onnxport import importer

from ._static import rank, tensor, tf_dtype


def expand_scale(ctx, s, x, axis, block_size):
    """Broadcast a scale / zero point to ``x``: scalar, per-axis 1-D, or blocked along ``axis``."""
    s = tensor(s)
    n = int(np.prod(s.shape.as_list())) if s.shape.rank else 1
    if s.shape.rank == 0 or (n == 1 and block_size == 0):
        return tf.reshape(s, [])
    r = rank(x)
    axis %= r
    if block_size:
        s = tf.repeat(s, block_size, axis=axis)
        return tf.gather(s, tf.range(tf.shape(x)[axis]), axis=axis)
    if s.shape.rank != 1:
        raise ctx.error(f"scale of shape {s.shape} needs block_size > 0")
    return tf.reshape(s, [-1 if i == axis else 1 for i in range(r)])


def quantize(x, scale, zp, out_dt, work=tf.float32):
    """round(x / scale) + zero point, saturated to the integer type ``out_dt``."""
    q = tf.cast(x, work) / tf.cast(scale, work)
    q = tf.round(q)  # half to even
    if zp is not None:
        q = q + tf.cast(zp, work)
    return tf.cast(tf.clip_by_value(q, out_dt.min, out_dt.max), out_dt)


@importer("QuantizeLinear", since=28)
def quantize_linear(ctx, x, y_scale, y_zero_point=None, *, axis, block_size, output_dtype, precision, saturate):
    x = tensor(x)
    out = ctx.output_tf_dtype(0)
    if out is None:
        if ctx.output_dtype(0) is not None:
            raise ctx.error(f"TensorFlow has no tensor type for {ctx.output_dtype(0).name}")
        out = tensor(y_zero_point).dtype if y_zero_point is not None else tf_dtype(output_dtype, tf.uint8)
    if out.is_floating:
        raise ctx.error(f"quantizing to {out.name} is not supported")
    work = tf_dtype(precision) if precision else (tf.float64 if x.dtype == tf.float64 else tf.float32)
    s = expand_scale(ctx, y_scale, x, axis, block_size)
    zp = None if y_zero_point is None else expand_scale(ctx, y_zero_point, x, axis, block_size)
    return quantize(x, s, zp, out, work)


@importer("DequantizeLinear", since=28)
def dequantize_linear(ctx, x, x_scale, x_zero_point=None, *, axis, block_size, output_dtype):
    x = tensor(x)
    out = ctx.output_tf_dtype(0) or tf_dtype(output_dtype, tensor(x_scale).dtype)
    v = tf.cast(x, tf.float32) if x.dtype.is_floating else tf.cast(x, tf.int32)
    if x_zero_point is not None:
        v = v - tf.cast(expand_scale(ctx, x_zero_point, x, axis, block_size), v.dtype)
    s = expand_scale(ctx, x_scale, x, axis, block_size)
    cdt = tf.float64 if s.dtype == tf.float64 else tf.float32
    return tf.cast(tf.cast(v, cdt) * tf.cast(s, cdt), out)


@importer("DynamicQuantizeLinear", since=11)
def dynamic_quantize_linear(ctx, x):
    """uint8 quantization with scale and zero point from the data range (which includes 0)."""
    x = tf.cast(x, tf.float32)
    lo = tf.minimum(tf.reduce_min(x), 0.0)
    hi = tf.maximum(tf.reduce_max(x), 0.0)
    scale = tf.where(hi == lo, tf.constant(1.0), hi - lo) / 255.0
    zp = tf.round(tf.clip_by_value(-lo / scale, 0.0, 255.0))
    y = tf.cast(tf.clip_by_value(tf.round(x / scale) + zp, 0.0, 255.0), tf.uint8)
    return y, scale, tf.cast(zp, tf.uint8)
