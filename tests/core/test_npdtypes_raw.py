"""``npdtypes.array_from_ir`` reads plain raw_data itself: the same array as onnx-ir's ``numpy()``."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import onnx_ir as ir
import pytest
from onnx import TensorProto, helper, numpy_helper

from onnxport.ir import npdtypes

ARRAYS = [np.arange(-3, 3, dtype=t).reshape(2, 3) for t in (np.float32, np.float64, np.float16, np.int8, np.int16,
                                                          np.int32, np.int64)]
ARRAYS += [np.arange(6, dtype=t) for t in (np.uint8, np.uint16, np.uint32, np.uint64)]
ARRAYS += [np.array(3.5, np.float32), np.zeros((0, 4), np.float32), np.array([1.5, -2], ml_dtypes.bfloat16),
           np.array([True, False]), np.array([1 + 2j], np.complex64), np.array([-8, 7], ml_dtypes.int4)]


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    return a.dtype == b.dtype and a.shape == b.shape and np.atleast_1d(a).tobytes() == np.atleast_1d(b).tobytes()


@pytest.mark.parametrize("arr", ARRAYS, ids=lambda a: f"{a.dtype}{list(a.shape)}")
def test_raw_data_reads_as_onnx_ir_reads_it(arr):
    tensor = ir.serde.TensorProtoTensor(numpy_helper.from_array(arr, "t"))
    got = npdtypes.array_from_ir(tensor)
    want = np.asarray(tensor.numpy()).astype(npdtypes.NUMPY_DTYPES[tensor.dtype])
    assert _same(got, want)
    if arr.dtype.kind != "c":
        assert _same(npdtypes.array_from_ir(tensor, np.dtype(np.float64)), want.astype(np.float64))


def test_typed_fields_and_a_short_raw_data_take_onnx_ir_s_path():
    typed = ir.serde.TensorProtoTensor(helper.make_tensor("t", TensorProto.FLOAT, [2], [1.0, 2.0]))
    assert _same(npdtypes.array_from_ir(typed), np.array([1.0, 2.0], np.float32))
    short = numpy_helper.from_array(np.ones(3, np.float32), "s")
    short.raw_data = short.raw_data[:8]  # a file the load refuses; read here only as onnx-ir reads it
    with pytest.raises(ValueError):
        npdtypes.array_from_ir(ir.serde.TensorProtoTensor(short))
