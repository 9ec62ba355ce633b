"""MatMulIntegerToFloat (com.microsoft) for TensorFlow: an exact integer product, scaled to float."""

from __future__ import annotations

import tensorflow as tf

from onnxport import importer

from .. import DOMAIN
from ..cases import quantization as C
from ..cases.quantization import TEST_TOLERANCES  # noqa: F401  (the testkit reads it here)
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
