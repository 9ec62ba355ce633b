"""Gemm and MatMul (full float32 precision on every device)."""

from __future__ import annotations

import jax.numpy as jnp
from jax import lax

from onnxport import importer

_HIGHEST = lax.Precision.HIGHEST


@importer("Gemm", since=13)
def gemm(ctx, a, b, c=None, *, alpha, beta, transA, transB):  # noqa: N803 - ONNX names
    # transposes are folded into the contracting dims: a materialized b.T of a weight passed to
    # jitted code as an argument costs a full copy of the weight on every call
    dims = (((0 if transA else 1,), (1 if transB else 0,)), ((), ()))
    y = lax.dot_general(a, b, dims, precision=_HIGHEST, preferred_element_type=a.dtype)
    if not jnp.issubdtype(y.dtype, jnp.floating) and (alpha != 1.0 or beta != 1.0):
        # integer Gemm: the float alpha/beta products are computed in float, then truncated back
        wide = jnp.float64 if y.dtype.itemsize == 8 else jnp.float32
        y = y.astype(wide)
        c = c.astype(wide) if c is not None else None
    if alpha != 1.0:
        y = y * jnp.asarray(alpha, y.dtype)
    if c is not None and beta != 0.0:
        y = y + (c if beta == 1.0 else c * jnp.asarray(beta, c.dtype))
    return y.astype(a.dtype)


@importer("MatMul", since=13)
def matmul(ctx, a, b):
    return jnp.matmul(a, b, precision=_HIGHEST, preferred_element_type=a.dtype)
