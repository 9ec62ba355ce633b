"""QuantizeLinear, DequantizeLinear (per tensor, per axis, blocked; integer, 4/2-bit and float8 /
float4 types) and DynamicQuantizeLinear."""

from __future__ import annotations

import jax.numpy as jnp
import ml_dtypes
import numpy as np

from onnxport import importer

from ._static import np_dtype


def _is_float(dt) -> bool:
    dt = np.dtype(dt)
    return dt.kind == "f" or dt.name.startswith(("bfloat16", "float8", "float4"))


def _int_range(dt):
    info = ml_dtypes.iinfo(np.dtype(dt))
    return int(info.min), int(info.max)


def expand_scale(ctx, s, x, axis, block_size):
    """Broadcast a scale / zero point to ``x``: scalar, per-axis 1-D, or blocked along ``axis``."""
    s = jnp.asarray(s)
    if s.ndim == 0 or s.size == 1 and block_size == 0:
        return jnp.reshape(s, ())
    axis %= x.ndim
    if block_size:
        s = jnp.repeat(s, block_size, axis=axis)
        return jnp.take(s, jnp.arange(x.shape[axis]), axis=axis)
    if s.ndim != 1:
        raise ctx.error(f"scale of shape {s.shape} needs block_size > 0")
    return jnp.reshape(s, [x.shape[axis] if i == axis else 1 for i in range(x.ndim)])


def _split(a):
    t = a * np.asarray(4097.0, a.dtype)  # Veltkamp split of a float32 into two 12-bit halves
    hi = t - (t - a)
    return hi, a - hi


def exact_div(x, s):
    """``x / s`` correctly rounded. XLA turns division by a broadcast scalar into a multiply by
    its reciprocal (1 ulp off, which flips round-half cases); one exact residual step fixes it."""
    q = x / s
    if np.dtype(q.dtype) != np.float32:
        return q
    s = jnp.broadcast_to(s, q.shape)
    qh, ql = _split(q)
    sh, sl = _split(s)
    p = q * s
    err = ((qh * sh - p) + qh * sl + ql * sh) + ql * sl  # q * s = p + err exactly
    return q + ((x - p) - err) / s


def quantize(x, scale, zp, out_dt, saturate=True, work=jnp.float32):
    """round(x / scale) + zero point, saturated to ``out_dt`` (float targets: cast, RNE)."""
    q = exact_div(x.astype(work), scale.astype(work))
    if _is_float(out_dt):
        if zp is not None:
            q = q + zp.astype(work)
        if saturate and np.dtype(out_dt).name not in ("float4_e2m1fn",):
            hi = float(ml_dtypes.finfo(np.dtype(out_dt)).max)
            q = jnp.clip(q, -hi, hi)
        return q.astype(out_dt)
    q = jnp.round(q)  # half to even
    if zp is not None:
        q = q + zp.astype(work)
    lo, hi = _int_range(out_dt)
    return jnp.clip(q, lo, hi).astype(jnp.int32).astype(out_dt)


@importer("QuantizeLinear", since=28)
def quantize_linear(ctx, x, y_scale, y_zero_point=None, *, axis, block_size, output_dtype, precision, saturate):
    out = ctx.output_np_dtype(0)
    if out is None:
        out = np.dtype(y_zero_point.dtype) if y_zero_point is not None else np_dtype(output_dtype, np.uint8)
    work = np_dtype(precision, jnp.float32) if precision else (
        np.float64 if np.dtype(x.dtype) == np.float64 else np.float32)
    s = expand_scale(ctx, y_scale, x, axis, block_size)
    zp = None if y_zero_point is None else expand_scale(ctx, y_zero_point, x, axis, block_size)
    if zp is not None and not _is_float(out):
        zp = zp.astype(jnp.int32)
    elif zp is not None:
        zp = zp.astype(jnp.float32)
    return quantize(jnp.asarray(x), s, zp, out, bool(saturate), work)


@importer("DequantizeLinear", since=28)
def dequantize_linear(ctx, x, x_scale, x_zero_point=None, *, axis, block_size, output_dtype):
    out = ctx.output_np_dtype(0) or np_dtype(output_dtype, np.dtype(x_scale.dtype))
    x = jnp.asarray(x)
    work = jnp.float32 if _is_float(x.dtype) else jnp.int32
    v = x.astype(jnp.float32) if _is_float(x.dtype) else x.astype(jnp.int32)
    if x_zero_point is not None:
        v = v - expand_scale(ctx, x_zero_point, x, axis, block_size).astype(work)
    s = expand_scale(ctx, x_scale, x, axis, block_size)
    cdt = jnp.float64 if np.dtype(s.dtype) == np.float64 else jnp.float32
    return (v.astype(cdt) * s.astype(cdt)).astype(out)


@importer("DynamicQuantizeLinear", since=11)
def dynamic_quantize_linear(ctx, x):
    """uint8 quantization with scale and zero point from the data range (which includes 0)."""
    lo = jnp.minimum(jnp.min(x), 0).astype(jnp.float32)
    hi = jnp.maximum(jnp.max(x), 0).astype(jnp.float32)
    scale = exact_div(jnp.where(hi == lo, jnp.float32(1), hi - lo), jnp.float32(255))
    zp = jnp.round(jnp.clip(exact_div(-lo, scale), 0, 255))
    y = jnp.clip(jnp.round(exact_div(x.astype(jnp.float32), scale)) + zp, 0, 255).astype(jnp.uint8)
    return y, scale.astype(jnp.float32), zp.astype(jnp.uint8)
