"""ONNX element types <-> numpy and TensorFlow dtypes.

Static values (shapes, constants) are numpy arrays; runtime values are ``tf.Tensor``s. Types
TensorFlow has no tensor type for (float8, float4, int4, int2) exist only as static numpy values
(ml_dtypes) and are computed with at float32/int8 width where a primitive allows it.
"""

from __future__ import annotations

import numpy as np
import onnx_ir as ir
import tensorflow as tf

from onnxport.errors import ConversionError
from onnxport.ir.npdtypes import NUMPY_DTYPES, is_float_dtype
from onnxport.ir.npdtypes import array_from_ir as _array_from_ir

DT = ir.DataType

_TO_NUMPY: dict[DT, np.dtype] = {**NUMPY_DTYPES, DT.STRING: np.dtype(object)}
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

#: types TensorFlow has no tensor for, held in a wider "carrier" tensor type that represents
#: every value exactly (float8/float4 in float32, 4/2-bit integers in int8/uint8)
CARRIERS: dict[DT, tf.DType] = {
    DT.FLOAT8E4M3FN: tf.float32, DT.FLOAT8E4M3FNUZ: tf.float32, DT.FLOAT8E5M2: tf.float32,
    DT.FLOAT8E5M2FNUZ: tf.float32, DT.FLOAT4E2M1: tf.float32,
    DT.INT4: tf.int8, DT.INT2: tf.int8, DT.UINT4: tf.uint8, DT.UINT2: tf.uint8,
}


#: the ONNX element types this backend holds: TensorFlow's own tensor types and the carried ones
HELD_TYPES: frozenset[DT] = frozenset(_TO_TF) | frozenset(CARRIERS)


def carrier(dtype: DT | int | None) -> tf.DType | None:
    """The TensorFlow type that holds values of an ONNX type without a tensor type, or None."""
    try:
        return CARRIERS.get(DT(dtype)) if dtype is not None else None
    except ValueError:
        return None


def to_carrier_array(arr: np.ndarray) -> np.ndarray:
    """A numpy array of an ml_dtypes narrow type as its carrier type (exact); others unchanged."""
    try:
        dt = to_onnx_dtype(arr.dtype)
    except ConversionError:
        return arr
    c = CARRIERS.get(dt)
    return arr if c is None else arr.astype(c.as_numpy_dtype)


def to_numpy_dtype(dtype: DT | int | None) -> np.dtype:
    """The numpy dtype of an ONNX element type (``object`` for strings); raises for unknown types."""
    if dtype is None:
        raise ConversionError("value has no known element type")
    try:
        return _TO_NUMPY[DT(dtype)]
    except (KeyError, ValueError):
        raise ConversionError(f"ONNX element type {dtype} has no numpy equivalent") from None


def to_tf_dtype(dtype: DT | int | None) -> tf.DType:
    """The TensorFlow dtype of an ONNX element type (the carrier type for narrow types, see
    :data:`CARRIERS`); raises for types TensorFlow cannot hold."""
    if dtype is None:
        raise ConversionError("value has no known element type")
    try:
        return _TO_TF.get(DT(dtype)) or CARRIERS[DT(dtype)]
    except (KeyError, ValueError):
        raise ConversionError(f"ONNX element type {DT(dtype).name} has no TensorFlow tensor type") from None


def has_tf_dtype(dtype: DT | int | None) -> bool:
    """Whether TensorFlow has a tensor type for this ONNX element type."""
    try:
        return dtype is not None and (DT(dtype) in _TO_TF or DT(dtype) in CARRIERS)
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
    return to_tf_dtype(to_onnx_dtype(dt))  # narrow ml_dtypes types: their carrier


def is_float(dtype: np.dtype | tf.DType | type) -> bool:
    """Whether a numpy or TensorFlow dtype is a floating type (ml_dtypes floats included)."""
    if isinstance(dtype, tf.DType):
        return dtype.is_floating
    return is_float_dtype(dtype)


def array_from_ir(tensor: ir.TensorProtocol) -> np.ndarray:
    """A numpy array holding exactly the values of an onnx-ir tensor."""
    if tensor.dtype == DT.STRING:
        return _array_from_ir(tensor)
    return _array_from_ir(tensor, to_numpy_dtype(tensor.dtype))
