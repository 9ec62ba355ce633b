"""Activations: Relu family, sigmoid-like, Gelu, Softplus, Shrink, Clip."""

from __future__ import annotations

import math

import tensorflow as tf

from onnxport import importer


def _c(v, x):
    return tf.constant(v, x.dtype)


@importer("Relu", since=14)
def relu(ctx, x):
    return tf.nn.relu(x)  # the Relu kernel, which grappler fuses into a preceding Conv2D + BiasAdd


@importer("Sigmoid", since=13)
def sigmoid(ctx, x):
    return tf.math.sigmoid(x)


@importer("Tanh", since=13)
def tanh(ctx, x):
    return tf.math.tanh(x)


@importer("LeakyRelu", since=16)
def leaky_relu(ctx, x, *, alpha):
    return tf.where(x >= 0, x, x * _c(alpha, x))


@importer("PRelu", since=16)
def prelu(ctx, x, slope):
    slope = tf.cast(slope, x.dtype)
    return tf.where(x < 0, x * slope, x)


@importer("Elu", since=22)
def elu(ctx, x, *, alpha):
    return tf.where(x > 0, x, _c(alpha, x) * tf.math.expm1(x))


@importer("Selu", since=22)
def selu(ctx, x, *, alpha, gamma):
    return _c(gamma, x) * tf.where(x > 0, x, _c(alpha, x) * tf.math.expm1(x))


@importer("Celu", since=28)
def celu(ctx, x, *, alpha):
    a = _c(alpha, x)
    return tf.maximum(x, 0) + tf.minimum(tf.zeros((), x.dtype), a * tf.math.expm1(x / a))


@importer("Gelu", since=20)
def gelu(ctx, x, *, approximate):
    if approximate not in ("none", "tanh"):
        raise ctx.error(f"unknown approximate={approximate!r} (expected 'none' or 'tanh')")
    if approximate == "tanh":
        inner = _c(math.sqrt(2 / math.pi), x) * (x + _c(0.044715, x) * x * x * x)
        return _c(0.5, x) * x * (1 + tf.math.tanh(inner))
    return _c(0.5, x) * x * (1 + tf.math.erf(x * _c(1 / math.sqrt(2), x)))


@importer("HardSigmoid", since=22)
def hard_sigmoid(ctx, x, *, alpha, beta):
    return tf.clip_by_value(x * _c(alpha, x) + _c(beta, x), _c(0, x), _c(1, x))


@importer("HardSwish", since=22)
def hard_swish(ctx, x):
    return x * tf.clip_by_value(x / _c(6, x) + _c(0.5, x), _c(0, x), _c(1, x))


@importer("Softplus", since=22)
def softplus(ctx, x):
    return tf.math.softplus(x)


@importer("Softsign", since=22)
def softsign(ctx, x):
    return x / (1 + tf.abs(x))


@importer("ThresholdedRelu", since=22)
def thresholded_relu(ctx, x, *, alpha):
    return tf.where(x > _c(alpha, x), x, tf.zeros((), x.dtype))


@importer("Mish", since=22)
def mish(ctx, x):
    return x * tf.math.tanh(tf.math.softplus(x))


@importer("Swish", since=24)
def swish(ctx, x, *, alpha):
    return x * tf.math.sigmoid(_c(alpha, x) * x)


@importer("Shrink", since=9)
def shrink(ctx, x, *, bias, lambd):
    # computed in float for integer inputs too, then cast back to the input type
    wide = x if x.dtype.is_floating else tf.cast(x, tf.float64 if x.dtype.size == 8 else tf.float32)
    lam, b = tf.constant(lambd, wide.dtype), tf.constant(bias, wide.dtype)
    out = tf.where(wide < -lam, wide + b, tf.where(wide > lam, wide - b, tf.zeros((), wide.dtype)))
    return tf.cast(out, x.dtype)


@importer("Clip", since=13)
def clip(ctx, x, min=None, max=None):  # noqa: A002 - ONNX input names
    x = tf.convert_to_tensor(x)
    if min is not None:
        x = tf.maximum(x, tf.cast(min, x.dtype))
    if max is not None:
        x = tf.minimum(x, tf.cast(max, x.dtype))
    return x
