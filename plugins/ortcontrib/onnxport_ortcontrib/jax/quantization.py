"""MatMulIntegerToFloat and DynamicQuantizeMatMul (com.microsoft) for JAX: an exact integer
product, scaled to float."""

from __future__ import annotations

import jax.numpy as jnp

from onnxport import importer

from .. import DOMAIN
from ..cases import quantization as C
from ..cases.quantization import TEST_TOLERANCES  # noqa: F401  (the testkit reads it here)
from ..opmath import DYNAMIC_QMAX


def _centered(x, zero_point):
    x = x.astype(jnp.int32)
    return x if zero_point is None else x - zero_point.astype(jnp.int32)


@importer("MatMulIntegerToFloat", since=1, domain=DOMAIN, cases=C.matmul_integer_to_float_cases())
def matmul_integer_to_float(ctx, a, b, a_scale, b_scale, a_zero_point=None, b_zero_point=None, bias=None):
    """``((A - a_zero_point) @ (B - b_zero_point)) * (a_scale * b_scale) + bias``; B's scale and
    zero point are per tensor or per column; the product is exact (int32 accumulation)."""
    acc = jnp.matmul(_centered(a, a_zero_point), _centered(b, b_zero_point), preferred_element_type=jnp.int32)
    y = acc.astype(jnp.float32) * (a_scale.astype(jnp.float32) * b_scale.astype(jnp.float32))
    if bias is not None:
        y = y + bias.astype(jnp.float32)
    return y.astype(a_scale.dtype)


@importer("DynamicQuantizeMatMul", since=1, domain=DOMAIN, cases=C.dynamic_quantize_matmul_cases())
def dynamic_quantize_matmul(ctx, a, b, b_scale, b_zero_point=None, bias=None):
    """A quantized to uint8 over its range with 0 included (scale ``(max - min) / 255``, zero point
    ``round(-min / scale)``, half to even, as DynamicQuantizeLinear), then MatMulIntegerToFloat."""
    a = a.astype(jnp.float32)
    low = jnp.minimum(jnp.min(a), 0.0)
    high = jnp.maximum(jnp.max(a), 0.0)
    scale = (high - low) / jnp.float32(DYNAMIC_QMAX)
    safe = jnp.where(scale == 0, jnp.float32(1), scale)
    zero_point = jnp.clip(jnp.round(-low / safe), 0, DYNAMIC_QMAX)
    q = jnp.clip(jnp.round(a / safe) + zero_point, 0, DYNAMIC_QMAX)
    acc = jnp.matmul((q - zero_point).astype(jnp.int32), _centered(b, b_zero_point),
                     preferred_element_type=jnp.int32)
    y = acc.astype(jnp.float32) * (scale * b_scale.astype(jnp.float32))
    if bias is not None:
        y = y + bias.astype(jnp.float32)
    return y
