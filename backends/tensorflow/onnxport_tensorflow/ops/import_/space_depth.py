"""DepthToSpace (DCR and CRD) and SpaceToDepth, as reshape-transpose-reshape."""

from __future__ import annotations

import tensorflow as tf

from onnxport import importer


@importer("DepthToSpace", since=28)
def depth_to_space(ctx, x, *, blocksize, mode):
    n, c, h, w = tf.unstack(tf.shape(x))
    b = blocksize
    if mode == "DCR":
        t = tf.reshape(x, tf.stack([n, b, b, c // (b * b), h, w]))
        t = tf.transpose(t, (0, 3, 4, 1, 5, 2))
    else:  # CRD
        t = tf.reshape(x, tf.stack([n, c // (b * b), b, b, h, w]))
        t = tf.transpose(t, (0, 1, 4, 2, 5, 3))
    return tf.reshape(t, tf.stack([n, c // (b * b), h * b, w * b]))


@importer("SpaceToDepth", since=28)
def space_to_depth(ctx, x, *, blocksize, mode):
    n, c, h, w = tf.unstack(tf.shape(x))
    b = blocksize
    t = tf.reshape(x, tf.stack([n, c, h // b, b, w // b, b]))
    t = tf.transpose(t, (0, 3, 5, 1, 2, 4) if mode == "DCR" else (0, 1, 3, 5, 2, 4))
    return tf.reshape(t, tf.stack([n, c * b * b, h // b, w // b]))
