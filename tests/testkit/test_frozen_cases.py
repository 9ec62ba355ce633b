"""The node cases whose expected values onnx computes with a version-dependent ml_dtypes cast are
replaced by ONNX's truncate-and-wrap rule: checked here against onnxruntime for every 4/2-bit
target, in and out of range."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

from onnxport_testkit.cases import _NARROW_CAST, _read_values, narrow_int_cast, node_cases

TARGETS = {TensorProto.INT4: (4, True), TensorProto.UINT4: (4, False), TensorProto.INT2: (2, True),
           TensorProto.UINT2: (2, False)}


def _ort_cast(x: np.ndarray, to: int) -> np.ndarray:
    nodes = [helper.make_node("Cast", ["x"], ["n"], to=to), helper.make_node("Cast", ["n"], ["y"], to=TensorProto.INT32)]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [None])],
                              [helper.make_tensor_value_info("y", TensorProto.INT32, [None])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 25)])
    model.ir_version = 11
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(None, {"x": x})[0]


@pytest.mark.parametrize("to", sorted(TARGETS), ids=lambda t: TensorProto.DataType.Name(t))
def test_narrow_int_cast_is_onnxruntimes_rule(to: int) -> None:
    # integer-valued floats, in and out of range (onnxruntime rounds fractions to nearest where
    # ml_dtypes and every other ONNX float -> integer cast truncate: the node cases hold no fractions)
    x = np.arange(-40, 41, dtype=np.float32)
    bits, signed = TARGETS[to]
    np.testing.assert_array_equal(narrow_int_cast(x, bits, signed).astype(np.int32), _ort_cast(x, to))


def test_frozen_cases_replace_only_the_float_to_narrow_int_casts() -> None:
    cases = {c.name: c for c in node_cases()}
    frozen = [n for n in cases if _NARROW_CAST.match(n)]
    # every float -> 4/2-bit Cast and CastLike case (plain and expanded) of this onnx version
    assert len(frozen) >= 24, sorted(frozen)
    for name in frozen:
        inputs, outputs = cases[name].data()
        bits, signed = (4 if "INT4" in name else 2), "_to_INT" in name
        np.testing.assert_array_equal(np.asarray(outputs[0]).astype(np.int32),
                                      narrow_int_cast(inputs[0], bits, signed).astype(np.int32), err_msg=name)
    # ... and nothing else: an int4 -> float case keeps onnx's own expected values
    other = cases["test_cast_INT4_to_FLOAT"]
    np.testing.assert_array_equal(other.data()[1][0], _read_values(other.path, "output")[0])
