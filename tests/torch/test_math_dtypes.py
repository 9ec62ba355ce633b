"""Integer edge cases of the math, comparison, bitwise and reduction primitives.

The official node cases use small values; these check what torch lacks kernels for (uint16/32/64
beyond 2**63, shifts out of range, empty reductions) against numpy's exact integer semantics.
"""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import helper

import onnxport
from onnxport_torch import dtypes

from ..conftest import make_model

U64_BIG = np.array([2**64 - 1, 2**63 + 5, 7, 2**63], dtype=np.uint64)
U64_DIV = np.array([2, 2**63 + 1, 3, 2**63], dtype=np.uint64)


def run(op: str, inputs: list[np.ndarray], out_dtype: int | None = None, **attrs) -> np.ndarray:
    """Import a one-node model of ``op`` and run it on ``inputs``."""
    names = [f"x{i}" for i in range(len(inputs))]
    infos = [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape)
             for n, a in zip(names, inputs)]
    elem = out_dtype if out_dtype is not None else helper.np_dtype_to_tensor_dtype(inputs[0].dtype)
    out = helper.make_tensor_value_info("y", elem, None)
    model = make_model([helper.make_node(op, names, ["y"], **attrs)], infos, [out], opset=onnx.defs.onnx_opset_version())
    module = onnxport.import_model(model, backend="torch")
    return dtypes.to_numpy(module(*[dtypes.from_numpy(a) for a in inputs]))


def check(actual: np.ndarray, expected: np.ndarray) -> None:
    assert actual.dtype == expected.dtype, (actual.dtype, expected.dtype)
    np.testing.assert_array_equal(actual, expected)


@pytest.mark.parametrize("op,fn", [("Add", np.add), ("Sub", np.subtract), ("Mul", np.multiply)])
@pytest.mark.parametrize("dtype", [np.uint16, np.uint32, np.uint64])
def test_wrapping_arithmetic_unsigned(op, fn, dtype):
    info = np.iinfo(dtype)
    a = np.array([info.max, info.max - 1, 3, 0], dtype=dtype)
    b = np.array([2, info.max, 5, 1], dtype=dtype)
    with np.errstate(over="ignore"):
        check(run(op, [a, b]), fn(a, b))


def test_div_mod_uint64_beyond_int64():
    check(run("Div", [U64_BIG, U64_DIV]), U64_BIG // U64_DIV)
    check(run("Mod", [U64_BIG, U64_DIV]), U64_BIG % U64_DIV)


def test_integer_div_truncates_and_mod_follows_divisor():
    a = np.array([-7, 7, -7, 7], dtype=np.int32)
    b = np.array([2, -2, 3, -3], dtype=np.int32)
    check(run("Div", [a, b]), np.array([-3, -3, -2, -2], dtype=np.int32))
    check(run("Mod", [a, b]), np.mod(a, b))
    check(run("Mod", [a, b], fmod=1), np.fmod(a, b))


def test_max_min_compare_uint64():
    check(run("Max", [U64_BIG, U64_DIV]), np.maximum(U64_BIG, U64_DIV))
    check(run("Min", [U64_BIG, U64_DIV]), np.minimum(U64_BIG, U64_DIV))
    for op, fn in [("Greater", np.greater), ("LessOrEqual", np.less_equal), ("Equal", np.equal)]:
        check(run(op, [U64_BIG, U64_DIV], out_dtype=onnx.TensorProto.BOOL), fn(U64_BIG, U64_DIV))


def test_max_propagates_nan():
    a = np.array([1.0, np.nan, 3.0], dtype=np.float32)
    b = np.array([np.nan, 2.0, 1.0], dtype=np.float32)
    check(run("Max", [a, b]), np.maximum(a, b))


def test_bitshift_unsigned_and_signed():
    check(run("BitShift", [U64_BIG, np.array([1, 63, 0, 4], dtype=np.uint64)], direction="RIGHT"),
          U64_BIG >> np.array([1, 63, 0, 4], dtype=np.uint64))
    x = np.array([-128, -1, 64, 5], dtype=np.int8)
    check(run("BitShift", [x, np.array([1, 3, 1, 9], dtype=np.int8)], direction="RIGHT"),
          np.array([-64, -1, 32, 0], dtype=np.int8))
    # shift amounts >= the bit width leave only the sign fill
    check(run("BitShift", [x, np.array([8, 8, 8, 2], dtype=np.int8)], direction="RIGHT"),
          np.array([-1, -1, 0, 1], dtype=np.int8))
    u = np.array([1, 3, 0xFFFF], dtype=np.uint16)
    check(run("BitShift", [u, np.array([15, 16, 4], dtype=np.uint16)], direction="LEFT"),
          np.array([0x8000, 0, 0xFFF0], dtype=np.uint16))


def test_bitwise_not_uint32():
    x = np.array([0, 1, 2**32 - 1], dtype=np.uint32)
    check(run("BitwiseNot", [x]), np.invert(x))


def test_reduce_max_uint64_and_empty_int():
    x = U64_BIG.reshape(2, 2)
    axes = np.array([1], dtype=np.int64)
    check(run("ReduceMax", [x, axes], keepdims=0), x.max(axis=1))
    empty = np.zeros((2, 0), dtype=np.int32)
    check(run("ReduceMax", [empty, axes], keepdims=1), np.full((2, 1), np.iinfo(np.int32).min, dtype=np.int32))
    check(run("ReduceMin", [empty, axes], keepdims=0), np.full((2,), np.iinfo(np.int32).max, dtype=np.int32))


def test_argmax_select_last_index_and_uint64():
    x = np.array([[1, 3, 3, 2], [5, 5, 0, 5]], dtype=np.int32)
    check(run("ArgMax", [x], out_dtype=onnx.TensorProto.INT64, axis=1, keepdims=0, select_last_index=1),
          np.array([2, 3], dtype=np.int64))
    check(run("ArgMin", [x], out_dtype=onnx.TensorProto.INT64, axis=1, keepdims=0), np.array([0, 2], dtype=np.int64))
    check(run("ArgMax", [U64_BIG], out_dtype=onnx.TensorProto.INT64, axis=0, keepdims=0), np.array(0, dtype=np.int64))


def test_cumsum_uint32_exclusive_reverse():
    x = np.array([2**32 - 1, 1, 2, 3], dtype=np.uint32)
    axis = np.array(0, dtype=np.int32)
    with np.errstate(over="ignore"):
        expected = np.array([6, 5, 3, 0], dtype=np.uint32)
    check(run("CumSum", [x, axis], exclusive=1, reverse=1), expected)


def test_clip_uint64():
    lo = np.array(2**63, dtype=np.uint64)
    hi = np.array(2**64 - 2, dtype=np.uint64)
    check(run("Clip", [U64_BIG, lo, hi]), np.clip(U64_BIG, lo, hi))
