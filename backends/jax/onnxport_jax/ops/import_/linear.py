"""Gemm and MatMul (full float32 precision on every device)."""

from __future__ import annotations

import jax.numpy as jnp
from jax import lax

from onnxport import importer

_HIGHEST = lax.Precision.HIGHEST


@importer("Gemm", since=13)
def gemm(ctx, a, b, c=None, *, alpha, beta, transA, transB):  # noqa: N803 - ONNX names
    a = a.T if transA else a
    b = b.T if transB else b
    y = jnp.matmul(a, b, precision=_HIGHEST, preferred_element_type=a.dtype)
    if alpha != 1.0:
        y = y * jnp.asarray(alpha, y.dtype)
    if c is not None and beta != 0.0:
        y = y + (c if beta == 1.0 else c * jnp.asarray(beta, c.dtype))
    return y.astype(a.dtype)


@importer("MatMul", since=13)
def matmul(ctx, a, b):
    return jnp.matmul(a, b, precision=_HIGHEST, preferred_element_type=a.dtype)
