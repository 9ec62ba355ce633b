"""Cast and CastLike between TensorFlow's tensor types, strings included; types TensorFlow has
no tensor for (float8, float4, int4, int2) only for values known at import time (numpy)."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import onnx_ir as ir
import tensorflow as tf

from onnxport import importer

from ... import dtypes

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


def cast_to(ctx, x, to: int, saturate: int, round_mode: str):
    """``x`` converted to ONNX type ``to`` with the Cast semantics."""
    to = DT(to)
    if isinstance(x, np.ndarray) and (not dtypes.has_tf_dtype(to) or not _tf_ok(x.dtype)):
        if to == DT.STRING:
            return x.astype(np.str_).astype(object)
        return _static_cast(x, to, saturate)
    if not dtypes.has_tf_dtype(to):
        raise ctx.error(f"TensorFlow has no tensor type for {to.name}")
    target = dtypes.to_tf_dtype(to)
    x = tf.convert_to_tensor(x) if not isinstance(x, np.ndarray) or x.dtype.kind not in "OSU" \
        else tf.constant(x.astype(bytes), tf.string)
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
