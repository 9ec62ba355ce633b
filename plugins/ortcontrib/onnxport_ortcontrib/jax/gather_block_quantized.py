"""GatherBlockQuantized (com.microsoft) for JAX: gather rows of a blockwise-quantized table and
dequantize them. The table stays packed; only the gathered rows are unpacked."""

from __future__ import annotations

import jax.numpy as jnp
import onnx_ir as ir

from onnxport import importer

from .. import DOMAIN
from ..cases import gather_block_quantized as C
from ..cases.gather_block_quantized import TEST_TOLERANCES  # noqa: F401  (the testkit reads it here)
from ..opmath import gather_block_layout


def _values(x, packed, bits):
    """Quantized values as float32: uint8 bytes unpacked (first value low) or the values as they are."""
    if packed and bits == 4:
        x = jnp.stack((x & 0xF, x >> 4), axis=-1)
        return jnp.reshape(x, x.shape[:-2] + (-1,)).astype(jnp.float32)
    return x.astype(jnp.float32)


def _narrow(x, axis, length):
    return jnp.take(x, jnp.arange(length), axis=axis)


@importer("GatherBlockQuantized", since=1, domain=DOMAIN, cases=C.gather_block_quantized_cases())
def gather_block_quantized(ctx, data, indices, scales, zero_points=None, *, bits=4, block_size=128,
                           gather_axis=0, quantize_axis=1):
    """``take((q - zero_point) * scale, indices, gather_axis)``, scale and zero point per block of
    ``block_size`` along ``quantize_axis``; the default zero point is 8 (uint4 and packed uint8,
    4 bits), 128 (uint8, 8 bits) or 0 (int4)."""
    packed = ctx.input_dtype(0) == ir.DataType.UINT8
    with ctx.raising():
        ga, qa = gather_block_layout(tuple(data.shape), packed, bits, block_size, gather_axis, quantize_axis)
    flat = jnp.reshape(indices, (-1,))
    flat = jnp.where(flat < 0, flat + data.shape[ga], flat)
    q = _values(jnp.take(data, flat, axis=ga), packed, bits)
    s = jnp.take(scales, flat, axis=ga).astype(jnp.float32)
    length = q.shape[qa]
    if zero_points is None:
        zp = jnp.float32(0.0 if ctx.input_dtype(0) == ir.DataType.INT4 else float(1 << (bits - 1)))
    else:
        zp = _narrow(_values(jnp.take(zero_points, flat, axis=ga), packed, bits), qa, s.shape[qa])
        zp = _narrow(jnp.repeat(zp, block_size, axis=qa), qa, length)
    s = _narrow(jnp.repeat(s, block_size, axis=qa), qa, length)
    y = ((q - zp) * s).astype(scales.dtype)
    return jnp.reshape(y, y.shape[:ga] + tuple(indices.shape) + y.shape[ga + 1:])
