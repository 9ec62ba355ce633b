"""Cast and CastLike: every numeric type, float8 (saturating or not), float8e8m0 rounding, int4,
and strings for values known outside ``jax.jit``."""

from __future__ import annotations

import jax.numpy as jnp
import ml_dtypes
import numpy as np
import onnx_ir as ir
from jax import lax

from onnxport import importer

from ... import dtypes

DT = ir.DataType
_NARROW_INTS = {DT.INT4: 4, DT.UINT4: 4, DT.INT2: 2, DT.UINT2: 2}
_FLOAT8 = {DT.FLOAT8E4M3FN, DT.FLOAT8E4M3FNUZ, DT.FLOAT8E5M2, DT.FLOAT8E5M2FNUZ}


def _is_text(x) -> bool:
    return isinstance(x, np.ndarray) and x.dtype.kind in "OSU"


def _to_float8e8m0(x, saturate: bool, round_mode: str):
    """float -> float8e8m0 (a bare power-of-two exponent), rounding as ``round_mode`` says."""
    bits = lax.bitcast_convert_type(x.astype(jnp.float32), jnp.uint32)
    exponent = ((bits >> 23) & 0xFF).astype(jnp.uint32)
    special = exponent == 0xFF  # NaN and Inf keep the all-ones exponent (NaN)
    fraction = bits & 0x7FFFFF
    if round_mode == "nearest":
        guard = (bits & 0x400000) != 0
        rest = (bits & 0x3FFFFF) != 0
        up = guard & (rest | (exponent > 0))
    elif round_mode == "up":
        up = fraction != 0
    elif round_mode == "down":
        up = jnp.zeros(bits.shape, bool)
    else:
        raise ValueError(f"unknown round_mode {round_mode!r} (expected 'up', 'down' or 'nearest')")
    up = up & ~special
    if saturate:
        up = up & (exponent != 0xFE)
    exponent = jnp.where(special, 0xFF, (exponent + up.astype(jnp.uint32)) & 0xFF).astype(jnp.uint8)
    return lax.bitcast_convert_type(exponent, jnp.dtype(ml_dtypes.float8_e8m0fnu))


def cast_to(ctx, x, to: int, saturate: int, round_mode: str):
    """``x`` converted to ONNX type ``to`` with the Cast semantics."""
    to = DT(to)
    if to == DT.STRING:
        arr = ctx.concrete(x, "a cast to STRING (strings exist only outside jax.jit)")
        return arr.astype(np.str_).astype(object)
    target = dtypes.to_numpy_dtype(to)
    if _is_text(x):  # parse strings (they are static numpy values)
        text = np.asarray(x).astype(np.str_)
        if target.kind in "iub" or target.name in ("float16", "float32", "float64"):
            return text.astype(target)
        return cast_to(ctx, text.astype(np.float32), to, saturate, round_mode)
    x = jnp.asarray(x)
    if to in _FLOAT8 and saturate and dtypes.is_float(x.dtype):
        info = ml_dtypes.finfo(target)
        lo, hi = jnp.asarray(float(info.min), x.dtype), jnp.asarray(float(info.max), x.dtype)
        return jnp.clip(x, lo, hi).astype(target)
    if to == DT.FLOAT8E8M0:
        return _to_float8e8m0(x, bool(saturate), round_mode)
    if to in _NARROW_INTS and x.dtype != target:
        # 4/2-bit integers wrap around: keep the low bits of the (truncated) integer value
        bits = _NARROW_INTS[to]
        low = x.astype(jnp.int32) & ((1 << bits) - 1)
        if to in (DT.INT4, DT.INT2):
            low = jnp.where(low >= 1 << (bits - 1), low - (1 << bits), low)
        return low.astype(target)
    return x.astype(target)


@importer("Cast", since=28)
def cast(ctx, x, *, round_mode, saturate, to):
    return cast_to(ctx, x, to, saturate, round_mode)


@importer("CastLike", since=25)
def cast_like(ctx, x, target_type, *, round_mode, saturate):
    to = ctx.input_dtype(1)
    if to is None:
        to = DT.STRING if _is_text(target_type) else dtypes.to_onnx_dtype(target_type.dtype)
    return cast_to(ctx, x, to, saturate, round_mode)
