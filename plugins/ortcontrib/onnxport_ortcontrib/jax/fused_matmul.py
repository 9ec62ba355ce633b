"""FusedMatMul (com.microsoft) for JAX: ``alpha * op(A) @ op(B)``."""

from __future__ import annotations

import jax.numpy as jnp

from onnxport import importer

from .. import DOMAIN
from ..cases import fused_matmul as C
from ..cases.fused_matmul import TEST_TOLERANCES  # noqa: F401  (the testkit reads it here)
from ..opmath import fused_matmul_perm
from ._common import wide


@importer("FusedMatMul", since=1, domain=DOMAIN, cases=C.fused_matmul_cases())
def fused_matmul(ctx, a, b, *, alpha=1.0, transA=0, transB=0, transBatchA=0, transBatchB=0):
    """MatMul of A and B after their transposes (``trans*``: the last two dims; ``transBatch*``:
    dim 0 moved behind the batch dims), times ``alpha``."""
    with ctx.raising():
        pa = fused_matmul_perm(a.ndim, transA, transBatchA)
        pb = fused_matmul_perm(b.ndim, transB, transBatchB)
    a2 = wide(a) if pa is None else jnp.transpose(wide(a), pa)
    b2 = wide(b) if pb is None else jnp.transpose(wide(b), pb)
    y = jnp.matmul(a2, b2)
    return (y * alpha if alpha != 1.0 else y).astype(a.dtype)
