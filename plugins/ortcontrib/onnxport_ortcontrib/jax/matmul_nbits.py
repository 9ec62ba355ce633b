"""MatMulNBits (com.microsoft) for JAX: ``A @ dequantize(B).T + bias`` with B packed 2, 4 or 8
bits per value in blocks along K. B stays packed (uint8, as the file stores it) and is unpacked
on each call."""

from __future__ import annotations

import jax.numpy as jnp

from onnxport import importer

from .. import DOMAIN
from ..cases import matmul_nbits as C
from ..cases.matmul_nbits import TEST_TOLERANCES  # noqa: F401  (the testkit reads it here)
from ..opmath import nbits_layout, nbits_shifts


def _unpack(packed, bits, count):
    """uint8 (rows, bytes) -> the first ``count`` ``bits``-wide values of each row, as int32."""
    vals = (packed[..., None] >> jnp.asarray(nbits_shifts(bits))) & jnp.uint8((1 << bits) - 1)
    return jnp.reshape(vals, (packed.shape[0], -1))[:, :count].astype(jnp.int32)


@importer("MatMulNBits", since=1, domain=DOMAIN, cases=C.matmul_nbits_cases())
def matmul_nbits(ctx, a, b, scales, zero_points=None, g_idx=None, bias=None, *, K, N, bits=4, block_size,
                 accuracy_level=0):
    """Each row n of the (N, K) weight is ``(q - zero_point) * scale`` per block (per column k with
    ``g_idx``: group ``g_idx[k]``); zero points default to ``2**(bits-1)``, come packed (uint8) or
    as floats. ``accuracy_level`` only lets onnxruntime lower its precision: this computes at
    the most accurate level."""
    with ctx.raising():
        k_blocks, _ = nbits_layout(K, N, bits, block_size, tuple(b.shape))
    dtype = a.dtype
    q = _unpack(jnp.reshape(b, (N, -1)), bits, k_blocks * block_size)
    s = jnp.reshape(scales, (N, k_blocks)).astype(jnp.float32)
    if zero_points is None:
        zp = jnp.full((N, k_blocks), float(1 << (bits - 1)), jnp.float32)
    elif zero_points.dtype == jnp.uint8:
        zp = _unpack(jnp.reshape(zero_points, (N, -1)), bits, k_blocks).astype(jnp.float32)
    else:
        zp = jnp.reshape(zero_points, (N, k_blocks)).astype(jnp.float32)
    if g_idx is not None:
        w = (q[:, :K].astype(jnp.float32) - jnp.take(zp, g_idx, axis=1)) * jnp.take(s, g_idx, axis=1)
    else:
        w = (jnp.reshape(q.astype(jnp.float32), (N, k_blocks, block_size)) - zp[..., None]) * s[..., None]
        w = jnp.reshape(w, (N, -1))[:, :K]
    if dtype == jnp.float16:
        w = w.astype(dtype).astype(jnp.float32)  # onnxruntime dequantizes half weights in half precision
    y = jnp.matmul(a.astype(jnp.float32), w.T)
    if bias is not None:
        y = y + bias.astype(jnp.float32)
    return y.astype(dtype)
