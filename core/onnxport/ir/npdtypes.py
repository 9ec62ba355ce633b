"""ONNX element types <-> numpy dtypes (ml_dtypes for bfloat16, float8, float4, int4, int2).

The one table every backend reads for static values (shapes, constants, initializers); a
backend adds its framework's own types beside it.
"""

from __future__ import annotations

import math
import sys

import ml_dtypes
import numpy as np
import onnx_ir as ir

from .filedata import read_array, readable

DT = ir.DataType

#: every ONNX numeric element type as the numpy dtype that holds it exactly (no strings)
NUMPY_DTYPES: dict[DT, np.dtype] = {
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

#: ONNX types whose little-endian raw_data is the numpy array's memory as it is (not bool: a byte
#: other than 0 and 1 is no numpy bool; not the packed sub-byte types)
_RAW_AS_IS = {int(dt): NUMPY_DTYPES[dt] for dt in (DT.FLOAT, DT.DOUBLE, DT.FLOAT16, DT.BFLOAT16, DT.INT8, DT.INT16,
                                                  DT.INT32, DT.INT64, DT.UINT8, DT.UINT16, DT.UINT32, DT.UINT64)}


def _from_raw_data(proto) -> np.ndarray | None:
    """The (read-only) values of a proto's raw_data as they are, as ``TensorProtoTensor.numpy()``
    gives them, without its per-tensor dispatch (None: another layout, read the usual way)."""
    dtype = _RAW_AS_IS.get(proto.data_type)
    if dtype is None or proto.data_location == 1 or not proto.HasField("raw_data"):  # 1: EXTERNAL
        return None
    data = proto.raw_data
    dims = tuple(proto.dims)
    if len(data) != math.prod(dims) * dtype.itemsize:
        return None
    return np.frombuffer(data, dtype).reshape(dims)


def is_float_dtype(dtype: np.dtype | type) -> bool:
    """Whether a numpy dtype is a floating type (ml_dtypes floats included)."""
    dt = np.dtype(dtype)
    return dt.kind == "f" or dt.name.startswith(("bfloat16", "float8", "float4", "float6"))


def array_from_ir(tensor: ir.TensorProtocol, want: np.dtype | None = None) -> np.ndarray:
    """A numpy array holding exactly the values of an onnx-ir tensor (strings as ``object``);
    ``want``: the dtype numeric values are held in (default: :data:`NUMPY_DTYPES`)."""
    if tensor.dtype == DT.STRING:
        return np.asarray(tensor.numpy(), dtype=object)
    if type(tensor) is ir.serde.TensorProtoTensor and sys.byteorder == "little":
        arr = _from_raw_data(tensor.raw)
        if arr is not None:
            return arr if want is None or arr.dtype == want else arr.astype(want)
    arr = read_array(tensor) if readable(tensor) else tensor.numpy()  # external data: copied, not mapped
    want = NUMPY_DTYPES[tensor.dtype] if want is None else want
    return arr if arr.dtype == want else arr.astype(want)
