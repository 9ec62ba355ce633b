"""ONNX element types <-> numpy and TensorFlow dtypes.

Static values (shapes, constants) are numpy arrays; runtime values are ``tf.Tensor``s. Types
TensorFlow has no tensor type for (float8, float4, int4, int2) exist only as static numpy values
(ml_dtypes) and are computed with at float32/int8 width where a primitive allows it.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import onnx_ir as ir
import tensorflow as tf

from onnxport.errors import ConversionError

DT = ir.DataType

_TO_NUMPY: dict[DT, np.dtype] = {
    DT.FLOAT: np.dtype(np.float32),
    DT.DOUBLE: np.dtype(np.float64),
    DT.FLOAT16: np.dtype(np.float16),
    DT.BFLOAT16: np.dtype(ml_dtypes.bfloat16),
    DT.INT8: np.dtype(np.int8),
    DT.INT16: np.dtype(np.int16),
    DT.INT32: np.dtype(np.int32),
    DT.INT64: np.dtype(np.int64),
    DT.UINT8: np.dtype(np.uint8),
    DT.UINT16: np.dtype(np.uint16),
    DT.UINT32: np.dtype(np.uint32),
    DT.UINT64: np.dtype(np.uint64),
    DT.BOOL: np.dtype(np.bool_),
    DT.COMPLEX64: np.dtype(np.complex64),
    DT.COMPLEX128: np.dtype(np.complex128),
    DT.STRING: np.dtype(object),
    DT.FLOAT8E4M3FN: np.dtype(ml_dtypes.float8_e4m3fn),
    DT.FLOAT8E4M3FNUZ: np.dtype(ml_dtypes.float8_e4m3fnuz),
    DT.FLOAT8E5M2: np.dtype(ml_dtypes.float8_e5m2),
    DT.FLOAT8E5M2FNUZ: np.dtype(ml_dtypes.float8_e5m2fnuz),
    DT.FLOAT8E8M0: np.dtype(ml_dtypes.float8_e8m0fnu),
    DT.FLOAT4E2M1: np.dtype(ml_dtypes.float4_e2m1fn),
    DT.INT4: np.dtype(ml_dtypes.int4),
    DT.UINT4: np.dtype(ml_dtypes.uint4),
    DT.INT2: np.dtype(ml_dtypes.int2),
    DT.UINT2: np.dtype(ml_dtypes.uint2),
}
_FROM_NUMPY = {v: k for k, v in _TO_NUMPY.items()}

_TO_TF: dict[DT, tf.DType] = {
    DT.FLOAT: tf.float32,
    DT.DOUBLE: tf.float64,
    DT.FLOAT16: tf.float16,
    DT.BFLOAT16: tf.bfloat16,
    DT.INT8: tf.int8,
    DT.INT16: tf.int16,
    DT.INT32: tf.int32,
    DT.INT64: tf.int64,
    DT.UINT8: tf.uint8,
    DT.UINT16: tf.uint16,
    DT.UINT32: tf.uint32,
    DT.UINT64: tf.uint64,
    DT.BOOL: tf.bool,
    DT.COMPLEX64: tf.complex64,
    DT.COMPLEX128: tf.complex128,
    DT.STRING: tf.string,
}
_FROM_TF = {v: k for k, v in _TO_TF.items()}

FLOAT_TYPES = frozenset({DT.FLOAT, DT.DOUBLE, DT.FLOAT16, DT.BFLOAT16})


def to_numpy_dtype(dtype: DT | int | None) -> np.dtype:
    """The numpy dtype of an ONNX element type (``object`` for strings); raises for unknown types."""
    if dtype is None:
        raise ConversionError("value has no known element type")
    try:
        return _TO_NUMPY[DT(dtype)]
    except (KeyError, ValueError):
        raise ConversionError(f"ONNX element type {dtype} has no numpy equivalent") from None


def to_tf_dtype(dtype: DT | int | None) -> tf.DType:
    """The TensorFlow dtype of an ONNX element type; raises for types TensorFlow lacks."""
    if dtype is None:
        raise ConversionError("value has no known element type")
    try:
        return _TO_TF[DT(dtype)]
    except (KeyError, ValueError):
        raise ConversionError(f"ONNX element type {DT(dtype).name} has no TensorFlow tensor type") from None


def has_tf_dtype(dtype: DT | int | None) -> bool:
    """Whether TensorFlow has a tensor type for this ONNX element type."""
    try:
        return dtype is not None and DT(dtype) in _TO_TF
    except ValueError:
        return False


def to_onnx_dtype(dtype: np.dtype | tf.DType | type) -> DT:
    """The ONNX element type of a numpy or TensorFlow dtype."""
    if isinstance(dtype, tf.DType):
        try:
            return _FROM_TF[dtype]
        except KeyError:
            raise ConversionError(f"dtype {dtype.name} has no ONNX equivalent") from None
    try:
        return _FROM_NUMPY[np.dtype(dtype)]
    except (KeyError, TypeError):
        raise ConversionError(f"dtype {dtype} has no ONNX equivalent") from None


def tf_from_numpy(dtype: np.dtype | type) -> tf.DType:
    """The TensorFlow dtype of a numpy dtype (``object``/str/bytes -> ``tf.string``)."""
    dt = np.dtype(dtype)
    if dt.kind in "OSU":
        return tf.string
    return to_tf_dtype(to_onnx_dtype(dt))


def is_float(dtype: np.dtype | tf.DType | type) -> bool:
    """Whether a numpy or TensorFlow dtype is a floating type (ml_dtypes floats included)."""
    if isinstance(dtype, tf.DType):
        return dtype.is_floating
    dt = np.dtype(dtype)
    return dt.kind == "f" or dt.name.startswith(("bfloat16", "float8", "float4", "float6"))


def array_from_ir(tensor: ir.TensorProtocol) -> np.ndarray:
    """A numpy array holding exactly the values of an onnx-ir tensor."""
    if tensor.dtype == DT.STRING:
        return np.asarray(tensor.numpy(), dtype=object)
    arr = tensor.numpy()
    want = to_numpy_dtype(tensor.dtype)
    return arr if arr.dtype == want else arr.astype(want)
