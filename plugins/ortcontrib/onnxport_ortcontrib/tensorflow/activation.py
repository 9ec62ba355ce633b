"""Gelu, FastGelu, BiasGelu, QuickGelu and BiasAdd (com.microsoft) for TensorFlow."""

from __future__ import annotations

import math

import tensorflow as tf

from onnxport import importer

from .. import DOMAIN
from ..cases import activation as C
from ..cases.activation import TEST_TOLERANCES  # noqa: F401  (the testkit reads it here)
from ._common import wide


def _erf_gelu(y):
    return 0.5 * y * (1.0 + tf.math.erf(y * (1.0 / math.sqrt(2.0))))


@importer("Gelu", since=1, domain=DOMAIN, cases=C.gelu_cases())
def gelu(ctx, x):
    """The exact (erf) GELU."""
    x = tf.convert_to_tensor(x)
    return tf.cast(_erf_gelu(wide(x)), x.dtype)


@importer("BiasGelu", since=1, domain=DOMAIN, cases=C.bias_gelu_cases())
def bias_gelu(ctx, a, b):
    """The exact GELU of ``a + b`` (``b`` broadcast along the last axis)."""
    a = tf.convert_to_tensor(a)
    return tf.cast(_erf_gelu(wide(a) + wide(b)), a.dtype)


@importer("FastGelu", since=1, domain=DOMAIN, cases=C.fast_gelu_cases())
def fast_gelu(ctx, x, bias=None):
    """The tanh approximation of GELU of ``x`` (+ ``bias``)."""
    x = tf.convert_to_tensor(x)
    y = wide(x) if bias is None else wide(x) + wide(bias)
    inner = math.sqrt(2.0 / math.pi) * (y + 0.044715 * y * y * y)
    return tf.cast(0.5 * y * (1.0 + tf.tanh(inner)), x.dtype)


@importer("QuickGelu", since=1, domain=DOMAIN, cases=C.quick_gelu_cases())
def quick_gelu(ctx, x, *, alpha=1.702):
    """``x * sigmoid(alpha * x)``."""
    x = tf.convert_to_tensor(x)
    y = wide(x)
    return tf.cast(y * tf.sigmoid(alpha * y), x.dtype)


@importer("BiasAdd", since=1, domain=DOMAIN, cases=C.bias_add_cases())
def bias_add(ctx, x, bias, skip):
    """``x + bias + skip`` (``bias`` along the last axis)."""
    x = tf.convert_to_tensor(x)
    return tf.cast(wide(x) + wide(bias) + wide(skip), x.dtype)
