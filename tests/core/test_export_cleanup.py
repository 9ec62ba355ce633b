"""The export pipeline's last clean-ups: Constant nodes become initializers, and a backend's
chosen pattern fusions (``fuse_named``) run alone."""

from __future__ import annotations

import numpy as np
import onnx
import onnx_ir as ir
import onnxruntime as ort
import pytest
from onnx import helper, numpy_helper

from onnxport.exporting.fusions.patterns import fuse_named
from onnxport.exporting.passes.optimize import constants_to_initializers
from onnxport.plugin.opfacts import marked_not_trainable

from ..conftest import make_model, tensor_info

_X = np.random.default_rng(0).standard_normal((2, 3)).astype(np.float32)


def _run(proto: onnx.ModelProto) -> list[np.ndarray]:
    onnx.checker.check_model(proto, full_check=True)
    return ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"x": _X})


def test_constants_become_initializers():
    """Main-graph Constants (tensor and int-list forms) are initializers of the same name, marked
    as no weight; a Constant that is a graph output and one inside a subgraph stay nodes."""
    then = helper.make_graph([helper.make_node("Constant", [], ["inner"], value_floats=[1.0, 2.0, 3.0]),
                              helper.make_node("Add", ["x", "inner"], ["t"])], "then", [], [tensor_info("t", [2, 3])])
    other = helper.make_graph([helper.make_node("Sub", ["x", "scale"], ["e"])], "else", [], [tensor_info("e", [2, 3])])
    nodes = [
        helper.make_node("Constant", [], ["scale"], value=numpy_helper.from_array(np.full(3, 0.5, np.float32))),
        helper.make_node("Constant", [], ["shape"], value_ints=[3, 2]),
        helper.make_node("Constant", [], ["flag"], value=numpy_helper.from_array(np.asarray(True))),
        helper.make_node("Constant", [], ["out_const"], value_float=7.0),
        helper.make_node("Mul", ["x", "scale"], ["m"]),
        helper.make_node("Reshape", ["m", "shape"], ["y"]),
        helper.make_node("If", ["flag"], ["z"], then_branch=then, else_branch=other),
    ]
    proto = make_model(nodes, [tensor_info("x", [2, 3])],
                       [tensor_info("y", [3, 2]), tensor_info("z", [2, 3]), tensor_info("out_const", [])], opset=18)
    want = _run(proto)
    model = ir.serde.deserialize_model(proto)
    assert constants_to_initializers(model) == 3
    assert sorted(model.graph.initializers) == ["flag", "scale", "shape"]
    assert all(marked_not_trainable(v) for v in model.graph.initializers.values())
    assert [n.op_type for n in model.graph] == ["Constant", "Mul", "Reshape", "If"]
    sub = model.graph.node(3).attributes["then_branch"].value
    assert [n.op_type for n in sub] == ["Constant", "Add"]
    for got, exp in zip(_run(ir.serde.serialize_model(model)), want):
        np.testing.assert_array_equal(got, exp)


def _matmul_model() -> onnx.ModelProto:
    w = numpy_helper.from_array(np.random.default_rng(1).standard_normal((3, 4)).astype(np.float32), "w")
    b = numpy_helper.from_array(np.random.default_rng(2).standard_normal(4).astype(np.float32), "b")
    nodes = [helper.make_node("MatMul", ["x", "w"], ["mm"]), helper.make_node("Add", ["mm", "b"], ["a"]),
             helper.make_node("Exp", ["a"], ["e"]),
             helper.make_node("ReduceSum", ["e", "axes"], ["s"], keepdims=1),
             helper.make_node("Div", ["e", "s"], ["y"])]
    axes = numpy_helper.from_array(np.asarray([-1], np.int64), "axes")
    return onnx.shape_inference.infer_shapes(
        make_model(nodes, [tensor_info("x", [2, 3])], [tensor_info("y", [2, 4])], [w, b, axes], opset=18))


def test_fuse_named_runs_only_the_named_fusions():
    proto = _matmul_model()
    want = _run(proto)
    model = ir.serde.deserialize_model(proto)
    assert fuse_named(model, ("Gemm",)) == {"Gemm": 1}
    assert [n.op_type for n in model.graph] == ["Gemm", "Exp", "ReduceSum", "Div"]  # the softmax stays
    out = ir.serde.serialize_model(model)
    np.testing.assert_allclose(_run(out)[0], want[0], rtol=1e-6, atol=1e-6)
    with pytest.raises(ValueError, match="no fusion named"):
        fuse_named(model, ("Nope",))


@pytest.mark.parametrize("flag", [True, False])
def test_finish_turns_constants_into_initializers_when_asked(flag):
    from onnxport.exporting import pipeline as ex

    nodes = [helper.make_node("Constant", [], ["shape"], value_ints=[3, 2]),
             helper.make_node("Reshape", ["x", "shape"], ["y"])]
    proto = make_model(nodes, [tensor_info("x", [2, 3])], [tensor_info("y", [3, 2])], opset=18)
    model = ex.finish(ir.serde.deserialize_model(proto), ex.ExportOptions(), backend="mine",
                      constant_initializers=flag)
    assert [n.op_type for n in model.graph] == ([] if flag else ["Constant"]) + ["Reshape"]
    assert ("shape" in model.graph.initializers) == flag
    np.testing.assert_array_equal(_run(ir.serde.serialize_model(model))[0], _X.reshape(3, 2))
