"""QLinearSigmoid and QLinearLeakyRelu (com.microsoft) for JAX: dequantize, apply the
activation in float32, quantize (round half to even, saturate) to the input's 8-bit type."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from onnxport import importer

from .. import DOMAIN
from ..cases import qlinear_activation as C
from ..cases.qlinear_activation import TEST_TOLERANCES  # noqa: F401  (the testkit reads it here)


def _apply(x, x_scale, x_zero_point, y_scale, y_zero_point, fn):
    info = jnp.iinfo(x.dtype)
    f32 = jnp.float32
    xz = f32(0) if x_zero_point is None else x_zero_point.astype(f32)
    yz = f32(0) if y_zero_point is None else y_zero_point.astype(f32)
    y = fn((x.astype(f32) - xz) * x_scale.astype(f32))
    return jnp.clip(jnp.round(y / y_scale.astype(f32)) + yz, info.min, info.max).astype(x.dtype)


@importer("QLinearSigmoid", since=1, domain=DOMAIN, cases=C.qlinear_sigmoid_cases())
def qlinear_sigmoid(ctx, x, x_scale, x_zero_point=None, y_scale=None, y_zero_point=None):
    """``quantize(sigmoid(dequantize(x)))`` with the given scales and zero points."""
    return _apply(x, x_scale, x_zero_point, y_scale, y_zero_point, jax.nn.sigmoid)


@importer("QLinearLeakyRelu", since=1, domain=DOMAIN, cases=C.qlinear_leaky_relu_cases())
def qlinear_leaky_relu(ctx, x, x_scale, x_zero_point=None, y_scale=None, y_zero_point=None, *, alpha=0.01):
    """``quantize(leaky_relu(dequantize(x), alpha))`` with the given scales and zero points."""
    return _apply(x, x_scale, x_zero_point, y_scale, y_zero_point,
                  lambda v: jnp.where(v >= 0, v, v * jnp.float32(alpha)))
