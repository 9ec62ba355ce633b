"""QLinearSigmoid and QLinearLeakyRelu (com.microsoft) for TensorFlow: dequantize, apply the
activation in float32, quantize (round half to even, saturate) to the input's 8-bit type."""

from __future__ import annotations

import tensorflow as tf

from onnxport import importer

from .. import DOMAIN
from ..cases import qlinear_activation as C
from ..cases.qlinear_activation import TEST_TOLERANCES  # noqa: F401  (the testkit reads it here)


def _apply(x, x_scale, x_zero_point, y_scale, y_zero_point, fn):
    x = tf.convert_to_tensor(x)
    low, high = float(x.dtype.min), float(x.dtype.max)
    xz = 0.0 if x_zero_point is None else tf.cast(x_zero_point, tf.float32)
    yz = 0.0 if y_zero_point is None else tf.cast(y_zero_point, tf.float32)
    y = fn((tf.cast(x, tf.float32) - xz) * tf.cast(x_scale, tf.float32))
    return tf.cast(tf.clip_by_value(tf.round(y / tf.cast(y_scale, tf.float32)) + yz, low, high), x.dtype)


@importer("QLinearSigmoid", since=1, domain=DOMAIN, cases=C.qlinear_sigmoid_cases())
def qlinear_sigmoid(ctx, x, x_scale, x_zero_point=None, y_scale=None, y_zero_point=None):
    """``quantize(sigmoid(dequantize(x)))`` with the given scales and zero points."""
    return _apply(x, x_scale, x_zero_point, y_scale, y_zero_point, tf.sigmoid)


@importer("QLinearLeakyRelu", since=1, domain=DOMAIN, cases=C.qlinear_leaky_relu_cases())
def qlinear_leaky_relu(ctx, x, x_scale, x_zero_point=None, y_scale=None, y_zero_point=None, *, alpha=0.01):
    """``quantize(leaky_relu(dequantize(x), alpha))`` with the given scales and zero points."""
    return _apply(x, x_scale, x_zero_point, y_scale, y_zero_point,
                  lambda v: tf.where(v >= 0, v, v * alpha))
