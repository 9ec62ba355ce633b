"""SwiGLU (opset 28): ``Y = A * sigmoid(alpha * A) * B`` on same-shape gate and value inputs."""

from __future__ import annotations

import tensorflow as tf

from onnxport import importer

from ._static import tensor


@importer("SwiGLU", since=28)
def swiglu(ctx, a, b, *, alpha):
    """Swish-gated linear unit; no broadcasting (A and B share one shape)."""
    a, b = tensor(a), tensor(b)
    if a.shape.as_list() != b.shape.as_list():
        raise ctx.error(f"SwiGLU needs A and B of one shape, got {tuple(a.shape)} and {tuple(b.shape)}")
    alpha = 1.0 if alpha is None else float(alpha)
    return a * tf.sigmoid(tf.constant(alpha, a.dtype) * a) * tf.cast(b, a.dtype)
