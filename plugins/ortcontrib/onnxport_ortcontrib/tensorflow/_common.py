"""Small TensorFlow helpers shared by the plugin's TensorFlow primitives."""

from __future__ import annotations

import tensorflow as tf


def wide(x):
    """``x`` as a tensor, in float32 where it is narrower (onnxruntime's contrib kernels compute
    half types in float32 and round the result once)."""
    x = tf.convert_to_tensor(x)
    return tf.cast(x, tf.float32) if x.dtype in (tf.float16, tf.bfloat16) else x
