"""ONNX element types <-> numpy/JAX dtypes (ml_dtypes for bfloat16, float8, int4 ...).

JAX arrays use numpy dtypes, so one table serves numpy and ``jax.numpy``. 64-bit types need
``jax_enable_x64``; :func:`needs_x64` tells which ONNX types do.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import onnx_ir as ir

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

#: the ONNX element types a JAX array holds (the 64-bit ones with ``jax_enable_x64``)
HELD_TYPES: frozenset[DT] = frozenset(_TO_NUMPY)

#: ONNX types JAX holds only with ``jax_enable_x64``
X64_TYPES = frozenset({DT.INT64, DT.UINT64, DT.DOUBLE, DT.COMPLEX128})

FLOAT_TYPES = frozenset({
    DT.FLOAT, DT.DOUBLE, DT.FLOAT16, DT.BFLOAT16,
})


def to_numpy_dtype(dtype: DT | int | None) -> np.dtype:
    """The numpy (= JAX) dtype of an ONNX element type; raises for strings and unknown types."""
    if dtype is None:
        raise ConversionError("value has no known element type")
    dtype = DT(dtype)
    try:
        return _TO_NUMPY[dtype]
    except KeyError:
        raise ConversionError(f"ONNX element type {dtype.name} has no JAX equivalent") from None


#: the same table, read as JAX dtypes
to_jax_dtype = to_numpy_dtype


def to_onnx_dtype(dtype: np.dtype | type) -> DT:
    """The ONNX element type of a numpy/JAX dtype."""
    try:
        return _FROM_NUMPY[np.dtype(dtype)]
    except (KeyError, TypeError):
        raise ConversionError(f"dtype {dtype} has no ONNX equivalent") from None


def needs_x64(dtype: DT | int | None) -> bool:
    """Whether JAX needs ``jax_enable_x64`` to hold this ONNX type without truncation."""
    return dtype is not None and DT(dtype) in X64_TYPES


def is_float(dtype: np.dtype | type) -> bool:
    """Whether a numpy/JAX dtype is a floating type (ml_dtypes floats included)."""
    dt = np.dtype(dtype)
    return dt.kind == "f" or dt.name.startswith(("bfloat16", "float8", "float4", "float6"))


def array_from_ir(tensor: ir.TensorProtocol) -> np.ndarray:
    """A numpy array holding exactly the values of an onnx-ir tensor."""
    if tensor.dtype == DT.STRING:
        return tensor.numpy()
    arr = tensor.numpy()
    want = to_numpy_dtype(tensor.dtype)
    return arr if arr.dtype == want else arr.astype(want)
