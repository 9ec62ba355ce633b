"""SwiGLU (opset 28): ``Y = A * sigmoid(alpha * A) * B`` on same-shape gate and value inputs."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from onnxport import importer


@importer("SwiGLU", since=28)
def swiglu(ctx, a, b, *, alpha):
    """Swish-gated linear unit; no broadcasting (A and B share one shape)."""
    if tuple(a.shape) != tuple(b.shape):
        raise ctx.error(f"SwiGLU needs A and B of one shape, got {tuple(a.shape)} and {tuple(b.shape)}")
    alpha = 1.0 if alpha is None else float(alpha)
    gate = jax.nn.sigmoid(jnp.asarray(alpha, a.dtype) * a)
    return (a * gate * b).astype(a.dtype)
