"""Gemm and MatMul."""

from __future__ import annotations

import tensorflow as tf

from onnxport import importer


@importer("Gemm", since=13)
def gemm(ctx, a, b, c=None, *, alpha, beta, transA, transB):  # noqa: N803 - ONNX names
    a, b = tf.convert_to_tensor(a), tf.convert_to_tensor(b)
    y = tf.linalg.matmul(a, b, transpose_a=bool(transA), transpose_b=bool(transB))
    out = y.dtype
    if not y.dtype.is_floating and (alpha != 1.0 or beta != 1.0):
        # integer Gemm: the float alpha/beta products are computed in float, then truncated back
        wide = tf.float64 if y.dtype.size == 8 else tf.float32
        y = tf.cast(y, wide)
        c = tf.cast(c, wide) if c is not None else None
    if alpha != 1.0:
        y = y * tf.constant(alpha, y.dtype)
    if c is not None and beta != 0.0:
        c = tf.cast(c, y.dtype)
        if c.shape.rank == 2 and c.shape[0] == 1:
            c = c[0]  # a [1, n] bias as [n]: grappler's MatMul+BiasAdd fusion rejects 2-D biases
        y = y + (c if beta == 1.0 else c * tf.constant(beta, y.dtype))
    return tf.cast(y, out)


@importer("MatMul", since=13)
def matmul(ctx, a, b):
    a, b = tf.convert_to_tensor(a), tf.convert_to_tensor(b)
    if a.shape.rank == 1 and b.shape.rank == 1:
        return tf.reduce_sum(a * b)
    if a.shape.rank == 1:
        return tf.squeeze(tf.linalg.matmul(a[None, :], b), -2)
    if b.shape.rank == 1:
        return tf.squeeze(tf.linalg.matmul(a, b[:, None]), -1)
    return tf.linalg.matmul(a, b)
