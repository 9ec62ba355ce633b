"""Einsum and Det."""

from __future__ import annotations

import tensorflow as tf

from onnxport import importer

from ._static import tensor


@importer("Einsum", since=28)
def einsum(ctx, *xs, equation):
    return tf.einsum(equation.replace(" ", ""), *[tensor(x) for x in xs])


@importer("Det", since=22)
def det(ctx, x):
    x = tf.convert_to_tensor(x)
    if x.dtype in (tf.float16, tf.bfloat16):  # TensorFlow has no half-precision determinant kernel
        return tf.cast(tf.linalg.det(tf.cast(x, tf.float32)), x.dtype)
    return tf.linalg.det(x)
