"""MatMulIntegerToFloat and DynamicQuantizeMatMul (com.microsoft) for TensorFlow: an exact integer
product, scaled to float."""

from __future__ import annotations

import tensorflow as tf

from onnxport import importer

from .. import DOMAIN
from ..cases import quantization as C
from ..cases.quantization import TEST_TOLERANCES  # noqa: F401  (the testkit reads it here)
from ..opmath import DYNAMIC_QMAX
from .fused_matmul import _matmul


def _centered(x, zero_point):
    x = tf.cast(x, tf.float64)  # exact for every int8/uint8 difference and their sums over K < 2^37
    return x if zero_point is None else x - tf.cast(zero_point, tf.float64)


@importer("MatMulIntegerToFloat", since=1, domain=DOMAIN, cases=C.matmul_integer_to_float_cases())
def matmul_integer_to_float(ctx, a, b, a_scale, b_scale, a_zero_point=None, b_zero_point=None, bias=None):
    """``((A - a_zero_point) @ (B - b_zero_point)) * (a_scale * b_scale) + bias``; B's scale and
    zero point are per tensor or per column; the product is exact (float64 holds it)."""
    a_scale = tf.convert_to_tensor(a_scale)
    acc = _matmul(_centered(a, a_zero_point), _centered(b, b_zero_point))
    y = tf.cast(acc, tf.float32) * (tf.cast(a_scale, tf.float32) * tf.cast(b_scale, tf.float32))
    if bias is not None:
        y = y + tf.cast(bias, tf.float32)
    return tf.cast(y, a_scale.dtype)


@importer("DynamicQuantizeMatMul", since=1, domain=DOMAIN, cases=C.dynamic_quantize_matmul_cases())
def dynamic_quantize_matmul(ctx, a, b, b_scale, b_zero_point=None, bias=None):
    """A quantized to uint8 over its range with 0 included (scale ``(max - min) / 255``, zero point
    ``round(-min / scale)``, half to even, as DynamicQuantizeLinear), then MatMulIntegerToFloat."""
    a = tf.cast(a, tf.float32)
    low = tf.minimum(tf.reduce_min(a), 0.0)
    high = tf.maximum(tf.reduce_max(a), 0.0)
    scale = (high - low) / DYNAMIC_QMAX
    safe = tf.where(tf.equal(scale, 0.0), tf.ones_like(scale), scale)
    zero_point = tf.clip_by_value(tf.round(-low / safe), 0.0, DYNAMIC_QMAX)
    q = tf.clip_by_value(tf.round(a / safe) + zero_point, 0.0, DYNAMIC_QMAX)
    acc = _matmul(tf.cast(q - zero_point, tf.float64), _centered(b, b_zero_point))
    y = tf.cast(acc, tf.float32) * (scale * tf.cast(b_scale, tf.float32))
    if bias is not None:
        y = y + tf.cast(bias, tf.float32)
    return y
