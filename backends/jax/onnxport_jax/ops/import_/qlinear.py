"""MatMulInteger, QLinearMatMul and QLinearConv: exact int32 accumulation, then requantization
``round(acc * (scale_a * scale_b / scale_y)) + zero_y`` saturated to the output type."""

from __future__ import annotations

import jax.numpy as jnp
import ml_dtypes
import numpy as np

from onnxport import importer

from ._padding import resolve_pads, spatial_settings
from .conv import conv_nd
from .quantize import exact_div


def _shift(x, zp, axis_len=None, axis=None):
    """``x - zero_point`` in int32; a 1-D zero point applies along ``axis``."""
    v = jnp.asarray(x).astype(jnp.int32)
    if zp is None:
        return v
    z = jnp.asarray(zp).astype(jnp.int32)
    if z.ndim == 1 and z.size > 1:
        shape = [1] * v.ndim
        shape[axis % v.ndim] = z.size
        z = jnp.reshape(z, shape)
    return v - z


def _requantize(acc, multiplier, y_zero_point, out_dtype):
    r = acc.astype(jnp.float32) * multiplier
    if y_zero_point is not None:
        r = r + jnp.asarray(y_zero_point).astype(jnp.float32)
    info = ml_dtypes.iinfo(np.dtype(out_dtype))
    return jnp.clip(jnp.round(r), info.min, info.max).astype(out_dtype)


@importer("MatMulInteger", since=10)
def matmul_integer(ctx, a, b, a_zero_point=None, b_zero_point=None):
    """(A - a_zero) @ (B - b_zero) in int32; per-row / per-column zero points allowed."""
    av = _shift(a, a_zero_point, axis=-2 if jnp.ndim(a) > 1 else -1)
    bv = _shift(b, b_zero_point, axis=-1)
    return jnp.matmul(av, bv, preferred_element_type=jnp.int32)


@importer("QLinearMatMul", since=21)
def qlinear_matmul(ctx, a, a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale, y_zero_point=None):
    acc = jnp.matmul(_shift(a, a_zero_point, axis=-2), _shift(b, b_zero_point, axis=-1),
                     preferred_element_type=jnp.int32)
    mult = exact_div(jnp.asarray(a_scale, jnp.float32) * jnp.asarray(b_scale, jnp.float32),
                     jnp.asarray(y_scale, jnp.float32))
    if jnp.ndim(mult) == 1 and mult.size > 1:  # per output column
        mult = jnp.reshape(mult, (1,) * (acc.ndim - 1) + (-1,))
    out = y_zero_point.dtype if y_zero_point is not None else a.dtype
    return _requantize(acc, mult, y_zero_point, out)


@importer("QLinearConv", since=10)
def qlinear_conv(ctx, x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale, y_zero_point=None,
                 b=None, *, auto_pad, dilations, group, kernel_shape, pads, strides):
    nd = w.ndim - 2
    kernel, strides, dilations = spatial_settings(nd, kernel_shape or w.shape[2:], strides, dilations)
    pads = resolve_pads(auto_pad, pads, x.shape[2:], kernel, strides, dilations)
    xi = _shift(x, x_zero_point)
    wi = _shift(w, w_zero_point, axis=0)
    acc = conv_nd(xi, wi, strides, pads, dilations, group, out_type=jnp.int32).astype(jnp.int32)
    if b is not None:
        acc = acc + jnp.reshape(jnp.asarray(b).astype(jnp.int32), (1, -1) + (1,) * nd)
    ws = jnp.asarray(w_scale, jnp.float32)
    if ws.ndim == 1 and ws.size > 1:
        ws = jnp.reshape(ws, (1, -1) + (1,) * nd)
    mult = exact_div(jnp.asarray(x_scale, jnp.float32) * ws, jnp.asarray(y_scale, jnp.float32))
    out = y_zero_point.dtype if y_zero_point is not None else x.dtype
    return _requantize(acc, mult, y_zero_point, out)


