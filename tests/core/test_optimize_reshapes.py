"""The optimizer's no-op Reshape: a constant target that copies (0), repeats or infers (-1) each
dim of an input whose leading dim is symbolic (an exporter's NHWC -> NCHW move of a [N, C] value)."""

from __future__ import annotations

import numpy as np
import onnx
import onnx_ir as ir
import onnxruntime as ort
import pytest
from onnx import helper, numpy_helper

from onnxport.exporting.passes.optimize import optimize

from ..conftest import make_model, tensor_info

_X = np.random.default_rng(0).standard_normal((3, 6)).astype(np.float32)


def _optimized_ops(target) -> list[str]:
    nodes = [helper.make_node("Constant", [], ["t"], value=numpy_helper.from_array(np.asarray(target, np.int64))),
             helper.make_node("Reshape", ["x", "t"], ["r"]),
             helper.make_node("Relu", ["r"], ["y"])]
    proto = onnx.shape_inference.infer_shapes(
        make_model(nodes, [tensor_info("x", ["n", 6])], [tensor_info("y", None)], opset=18))
    model = ir.serde.deserialize_model(proto)
    optimize(model)
    out = ir.serde.serialize_model(model)
    onnx.checker.check_model(out, full_check=True)
    got, want = (ort.InferenceSession(p.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"x": _X})
                 for p in (out, proto))
    np.testing.assert_array_equal(got[0], want[0])
    return [n.op_type for n in model.graph if n.op_type != "Constant"]


@pytest.mark.parametrize("target", [[0, 6], [-1, 6], [0, -1], [0, 0]])
def test_reshape_keeping_the_shape_goes(target):
    assert _optimized_ops(target) == ["Relu"]


@pytest.mark.parametrize("target", [[0, 3, 2], [-1, 3], [3, 6]])
def test_reshape_changing_or_not_provably_keeping_the_shape_stays(target):
    assert _optimized_ops(target) == ["Reshape", "Relu"]
