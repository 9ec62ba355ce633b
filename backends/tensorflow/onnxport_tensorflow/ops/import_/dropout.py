"""Dropout: the identity (mask all true) unless training; the ``training_mode`` input decides,
else the model's mode (``model.train()``/``model.eval()``). Training draws the mask from the
``seed`` attribute when set (stateless, the same mask every call), else from TensorFlow's
global random stream (a new mask per call).
"""

from __future__ import annotations

import tensorflow as tf

from onnxport import importer

from ._static import concrete, tensor


def uniform(ctx, shape, seed=None):
    """Uniform [0, 1) float32 draws for this node (stateless when ``seed`` is set)."""
    if seed is not None:
        return tf.random.stateless_uniform(shape, seed=[int(seed), 0], dtype=tf.float32)
    return tf.random.uniform(shape, dtype=tf.float32)


@importer("Dropout", since=22)
def dropout(ctx, x, ratio=None, training_mode=None, *, seed):
    x = tensor(x)
    train = ctx.training
    if training_mode is not None:
        train = bool(concrete(ctx, 2, training_mode, "training_mode").reshape(-1)[0])
    c = concrete(ctx, 1, ratio, "ratio") if (ratio is not None and ctx.const(1) is not None) else None
    if not train or (c is not None and float(c) == 0.0):
        return x if ctx.num_outputs == 1 else (x, tf.ones(tf.shape(x), tf.bool))
    p = tf.constant(0.5, tf.float32) if ratio is None else tf.cast(ratio, tf.float32)
    keep = uniform(ctx, tf.shape(x), seed) >= p
    scale = tf.cast(1.0 / (1.0 - p), x.dtype)
    y = tf.where(keep, x * scale, tf.zeros_like(x))
    return y if ctx.num_outputs == 1 else (y, keep)
