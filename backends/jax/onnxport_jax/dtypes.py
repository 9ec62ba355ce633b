"""ONNX element types <-> numpy/JAX dtypes (ml_dtypes for bfloat16, float8, int4 ...).

JAX arrays use numpy dtypes, so one table serves numpy and ``jax.numpy``. 64-bit types need
``jax_enable_x64``; :func:`needs_x64` tells which ONNX types do.
"""

from __future__ import annotations

import numpy as np
import onnx_ir as ir

from onnxport.errors import ConversionError
from onnxport.ir.npdtypes import NUMPY_DTYPES, is_float_dtype
from onnxport.ir.npdtypes import array_from_ir as _array_from_ir

DT = ir.DataType

_TO_NUMPY: dict[DT, np.dtype] = NUMPY_DTYPES
_FROM_NUMPY = {v: k for k, v in _TO_NUMPY.items()}

#: the ONNX element types a JAX array holds (the 64-bit ones with ``jax_enable_x64``)
HELD_TYPES: frozenset[DT] = frozenset(_TO_NUMPY)

#: ONNX types JAX holds only with ``jax_enable_x64``
X64_TYPES = frozenset({DT.INT64, DT.UINT64, DT.DOUBLE, DT.COMPLEX128})

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


#: whether a numpy/JAX dtype is a floating type (ml_dtypes floats included)
is_float = is_float_dtype


def array_from_ir(tensor: ir.TensorProtocol) -> np.ndarray:
    """A numpy array holding exactly the values of an onnx-ir tensor."""
    if tensor.dtype == DT.STRING:
        return tensor.numpy()
    return _array_from_ir(tensor, to_numpy_dtype(tensor.dtype))
