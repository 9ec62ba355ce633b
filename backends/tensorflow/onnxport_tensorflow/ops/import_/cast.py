"""Cast and CastLike between TensorFlow's tensor types, strings included. Types TensorFlow has no
tensor for live in carrier tensors (:data:`onnxport_tensorflow.dtypes.CARRIERS`): a cast to
float8/float4 rounds to that format's grid (nearest even, saturating or not) in float32, a cast
to int4/int2 truncates and wraps into int8/uint8. FLOAT8E8M0 exists only for import-time values."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import onnx_ir as ir
import tensorflow as tf

from onnxport import importer

from ... import dtypes
from ._static import tensor

DT = ir.DataType
_NARROW_INTS = {DT.INT4: 4, DT.UINT4: 4, DT.INT2: 2, DT.UINT2: 2}
_FLOAT8 = {DT.FLOAT8E4M3FN, DT.FLOAT8E4M3FNUZ, DT.FLOAT8E5M2, DT.FLOAT8E5M2FNUZ}


def _static_cast(x: np.ndarray, to: DT, saturate: int) -> np.ndarray:
    target = dtypes.to_numpy_dtype(to)
    if x.dtype.kind in "OSU":
        x = np.asarray(x).astype(np.str_).astype(np.float32)
    if to in _FLOAT8 and saturate and dtypes.is_float(x.dtype):
        info = ml_dtypes.finfo(target)
        return np.clip(x, float(info.min), float(info.max)).astype(target)
    if to in _NARROW_INTS and x.dtype != target:
        bits = _NARROW_INTS[to]
        low = x.astype(np.int32) & ((1 << bits) - 1)
        if to in (DT.INT4, DT.INT2):
            low = np.where(low >= 1 << (bits - 1), low - (1 << bits), low)
        return low.astype(target)
    return x.astype(target)


#: float formats on a float32 carrier: (mantissa bits, smallest normal exponent, largest finite,
#: what an overflow becomes without saturation: "inf" or "nan", whether -0 exists)
_FORMATS = {
    DT.FLOAT8E4M3FN: (3, -6, 448.0, "nan", True),
    DT.FLOAT8E4M3FNUZ: (3, -7, 240.0, "nan", False),
    DT.FLOAT8E5M2: (2, -14, 57344.0, "inf", True),
    DT.FLOAT8E5M2FNUZ: (2, -15, 57344.0, "nan", False),
    DT.FLOAT4E2M1: (1, 0, 6.0, "sat", True),
}


def round_to_format(x, to: DT, saturate: bool):
    """Float values rounded (nearest, ties to even) onto ``to``'s grid, held in float32."""
    mant, emin, top, overflow, neg_zero = _FORMATS[to]
    x64 = tf.cast(x, tf.float64)
    a = tf.abs(x64)
    e = tf.floor(tf.math.log(tf.where(a > 0, a, 1.0)) / np.log(2.0))
    two = tf.constant(2.0, tf.float64)
    e = tf.where(tf.pow(two, e + 1) <= a, e + 1, tf.where(tf.pow(two, e) > a, e - 1, e))
    quantum = tf.pow(two, tf.maximum(e, tf.constant(float(emin), tf.float64)) - mant)
    r = tf.round(x64 / quantum) * quantum  # tf.round: half to even
    big = (tf.abs(r) > top) | tf.math.is_inf(x64)
    sign = tf.where(x64 < 0, tf.constant(-1.0, tf.float64), tf.constant(1.0, tf.float64))
    if saturate or overflow == "sat":
        r = tf.where(big, sign * top, r)
    elif overflow == "inf":
        r = tf.where(big, sign * tf.constant(np.inf, tf.float64), r)
    else:
        r = tf.where(big, tf.fill(tf.shape(r), tf.constant(np.nan, tf.float64)), r)
    if overflow == "sat":  # float4 has no NaN: its NaN encoding is the -0 bit pattern (as onnx's)
        r = tf.where(tf.math.is_nan(x64), tf.fill(tf.shape(r), tf.constant(-0.0, tf.float64)), r)
    else:
        r = tf.where(tf.math.is_nan(x64), x64, r)
    if not neg_zero:
        r = tf.where(tf.equal(r, 0.0), tf.zeros_like(r), r)
    return tf.cast(r, tf.float32)


def wrap_int(x, to: DT):
    """Integer values truncated and wrapped into a 4/2-bit type, held in its int8/uint8 carrier."""
    bits = _NARROW_INTS[to]
    v = tf.cast(x, tf.int64) if x.dtype.is_integer or x.dtype == tf.bool else tf.cast(tf.cast(x, tf.float64), tf.int64)
    low = tf.bitwise.bitwise_and(v, (1 << bits) - 1)
    if to in (DT.INT4, DT.INT2):
        low = tf.where(low >= 1 << (bits - 1), low - (1 << bits), low)
    return tf.cast(low, dtypes.carrier(to))


def cast_to(ctx, x, to: int, saturate: int, round_mode: str):
    """``x`` converted to ONNX type ``to`` with the Cast semantics."""
    to = DT(to)
    if isinstance(x, np.ndarray) and (not dtypes.has_tf_dtype(to) or not _tf_ok(x.dtype)
                                      or dtypes.carrier(to) is not None):
        if to == DT.STRING:
            return x.astype(np.str_).astype(object)
        return _static_cast(x, to, saturate)
    if not dtypes.has_tf_dtype(to):
        raise ctx.error(f"TensorFlow has no tensor type for {to.name}")
    x = tensor(x)
    if to in _FORMATS:
        return round_to_format(x if x.dtype != tf.string else tf.strings.to_number(x, tf.float64), to,
                               bool(saturate))
    if to in _NARROW_INTS:
        return wrap_int(x, to)
    target = dtypes.to_tf_dtype(to)
    if target == tf.string:
        if x.dtype == tf.string:
            return x
        if x.dtype.is_floating:
            return tf.strings.as_string(x, shortest=True)
        if x.dtype == tf.bool:
            return tf.where(x, "1", "0")
        return tf.strings.as_string(x)
    if x.dtype == tf.string:
        if target == tf.bool:
            return tf.strings.to_number(x, tf.float32) != 0
        if target.is_integer:
            return tf.cast(tf.strings.to_number(x, tf.int64), target)
        num = tf.strings.to_number(x, tf.float64)
        return tf.cast(num, target)
    if target.is_integer and x.dtype.is_floating:
        # float -> int truncates toward zero; out-of-range values are undefined in ONNX
        return tf.cast(x, target)
    return tf.cast(x, target)


def _tf_ok(dt: np.dtype) -> bool:
    try:
        dtypes.tf_from_numpy(dt)
        return True
    except Exception:  # noqa: BLE001
        return False


@importer("Cast", since=28)
def cast(ctx, x, *, round_mode, saturate, to):
    return cast_to(ctx, x, to, saturate, round_mode)


@importer("CastLike", since=25)
def cast_like(ctx, x, target_type, *, round_mode, saturate):
    to = ctx.input_dtype(1)
    if to is None:
        to = dtypes.to_onnx_dtype(target_type.dtype)
    return cast_to(ctx, x, to, saturate, round_mode)
