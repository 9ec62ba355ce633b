"""ONNX element types <-> torch dtypes, and ONNX tensors -> torch tensors without silent casts."""

from __future__ import annotations

import math
import sys

import numpy as np
import onnx
import onnx_ir as ir
import torch

from onnxport.errors import ConversionError
from onnxport.ir.filedata import read_external, readable

DT = ir.DataType

_TO_TORCH: dict[DT, torch.dtype] = {
    DT.FLOAT: torch.float32,
    DT.DOUBLE: torch.float64,
    DT.FLOAT16: torch.float16,
    DT.BFLOAT16: torch.bfloat16,
    DT.INT8: torch.int8,
    DT.INT16: torch.int16,
    DT.INT32: torch.int32,
    DT.INT64: torch.int64,
    DT.UINT8: torch.uint8,
    DT.UINT16: torch.uint16,
    DT.UINT32: torch.uint32,
    DT.UINT64: torch.uint64,
    DT.BOOL: torch.bool,
    DT.COMPLEX64: torch.complex64,
    DT.COMPLEX128: torch.complex128,
    DT.FLOAT8E4M3FN: torch.float8_e4m3fn,
    DT.FLOAT8E4M3FNUZ: torch.float8_e4m3fnuz,
    DT.FLOAT8E5M2: torch.float8_e5m2,
    DT.FLOAT8E5M2FNUZ: torch.float8_e5m2fnuz,
    # 4-bit integers have no usable torch dtype: held widened, values unchanged
    DT.INT4: torch.int8,
    DT.UINT4: torch.uint8,
    DT.INT2: torch.int8,
    DT.UINT2: torch.uint8,
    DT.FLOAT8E8M0: torch.float8_e8m0fnu,
    # no element-wise torch dtype for FLOAT4E2M1: held widened in float32 (every value is exact)
    DT.FLOAT4E2M1: torch.float32,
}
if hasattr(torch, "float4_e2m1fn_x2"):
    pass  # packed pairs; no element-wise torch dtype for FLOAT4E2M1

#: the ONNX element types a torch tensor holds (some widened, values unchanged)
HELD_TYPES: frozenset[DT] = frozenset(_TO_TORCH)

_NARROW_INTS = (DT.INT4, DT.UINT4, DT.INT2, DT.UINT2)
_WIDENED = (*_NARROW_INTS, DT.FLOAT4E2M1)
_FROM_TORCH = {v: k for k, v in _TO_TORCH.items() if k not in _WIDENED}

FLOAT_TYPES = {
    torch.float32, torch.float64, torch.float16, torch.bfloat16,
}


def to_torch_dtype(dtype: DT | int | None) -> torch.dtype:
    """The torch dtype holding an ONNX element type; raises for strings and unknown types."""
    if dtype is None:
        raise ConversionError("value has no known element type")
    dtype = DT(dtype)
    try:
        return _TO_TORCH[dtype]
    except KeyError:
        raise ConversionError(f"ONNX element type {dtype.name} has no torch equivalent") from None


def to_onnx_dtype(dtype: torch.dtype) -> DT:
    """The ONNX element type of a torch dtype."""
    try:
        return _FROM_TORCH[dtype]
    except KeyError:
        raise ConversionError(f"torch dtype {dtype} has no ONNX equivalent") from None


def from_numpy(array: np.ndarray, onnx_dtype: DT | None = None) -> torch.Tensor:
    """A torch tensor holding exactly the values of a numpy array (ml_dtypes included)."""
    array = np.asarray(array)
    name = array.dtype.name
    if onnx_dtype is None:
        onnx_dtype = DT.from_numpy(array.dtype) if array.dtype != object else DT.STRING
    if onnx_dtype == DT.STRING or array.dtype == object or array.dtype.kind in "SU":
        raise ConversionError("string tensors have no torch equivalent")
    if onnx_dtype in _NARROW_INTS:
        return torch.from_numpy(np.array(array.astype(np.int8 if onnx_dtype in (DT.INT4, DT.INT2) else np.uint8), order="C"))
    if onnx_dtype == DT.FLOAT4E2M1:
        return torch.from_numpy(np.array(array.astype(np.float32), order="C"))
    target = to_torch_dtype(onnx_dtype)
    if name in ("bfloat16",) or name.startswith("float8"):
        raw = np.array(array, order="C").view(np.uint16 if name == "bfloat16" else np.uint8)  # keeps 0-d
        return torch.from_numpy(raw.copy()).view(target)
    if array.dtype.kind == "b":
        return torch.from_numpy(np.array(array, order="C")).to(torch.bool)  # ascontiguousarray makes 0-d 1-d
    return torch.from_numpy(np.array(array, copy=True, order="C")).to(target)


def to_numpy(tensor: torch.Tensor, onnx_dtype: DT | None = None) -> np.ndarray:
    """A numpy array with the values of a torch tensor, in the ONNX type's numpy dtype."""
    t = tensor.detach().cpu()
    if t.dtype == torch.bfloat16:
        import ml_dtypes

        arr = t.view(torch.uint16).numpy().view(ml_dtypes.bfloat16)
    elif t.dtype in (torch.float8_e4m3fn, torch.float8_e4m3fnuz, torch.float8_e5m2, torch.float8_e5m2fnuz,
                     torch.float8_e8m0fnu):
        import ml_dtypes

        np_name = {
            torch.float8_e4m3fn: "float8_e4m3fn",
            torch.float8_e4m3fnuz: "float8_e4m3fnuz",
            torch.float8_e5m2: "float8_e5m2",
            torch.float8_e5m2fnuz: "float8_e5m2fnuz",
            torch.float8_e8m0fnu: "float8_e8m0fnu",
        }[t.dtype]
        arr = t.view(torch.uint8).numpy().view(getattr(ml_dtypes, np_name))
    else:
        arr = t.numpy()
    if onnx_dtype is not None and onnx_dtype in _WIDENED:
        arr = arr.astype(DT(onnx_dtype).numpy())
    return arr


def tensor_from_ir(tensor: ir.TensorProtocol) -> torch.Tensor:
    """A torch tensor from an onnx-ir tensor (initializer, Constant value, attribute).

    External data (and a model file's weights read in place) goes straight from the file into the
    tensor: no mapped pages or intermediate arrays held beside it.
    """
    if type(tensor) is ir.serde.TensorProtoTensor:
        out = _from_raw_data(tensor.raw)
        if out is not None:
            return out
    if readable(tensor) and tensor.dtype in _TO_TORCH and tensor.dtype not in _WIDENED:
        out = torch.empty(tuple(tensor.shape.numpy()), dtype=_TO_TORCH[tensor.dtype])
        read_external(tensor, memoryview(out.reshape(-1).view(torch.uint8).numpy()))
        return out
    return from_numpy(tensor.numpy(), tensor.dtype)


#: ONNX types whose little-endian raw_data is the torch tensor's memory as it is (not bool: a byte
#: other than 0 and 1 is no torch bool)
_RAW_AS_IS = {int(dt): _TO_TORCH[dt] for dt in (DT.FLOAT, DT.DOUBLE, DT.FLOAT16, DT.BFLOAT16, DT.INT8, DT.INT16,
                                                DT.INT32, DT.INT64, DT.UINT8)}


def _from_raw_data(proto: onnx.TensorProto) -> torch.Tensor | None:
    """A tensor copied straight from a proto's raw_data (None: another layout, read the usual way)."""
    dtype = _RAW_AS_IS.get(proto.data_type)
    if dtype is None or sys.byteorder != "little" or proto.data_location == onnx.TensorProto.EXTERNAL \
            or not proto.HasField("raw_data"):
        return None
    data = proto.raw_data
    shape = tuple(proto.dims)
    if not data or len(data) != math.prod(shape) * dtype.itemsize:
        return None
    out = torch.empty(shape, dtype=dtype)
    memoryview(out.reshape(-1).view(torch.uint8).numpy())[:] = data
    return out
