"""Pattern fusion (framework-free, on hand-built ONNX): the rewrites run in If branches and in
model-local function bodies as in the main graph, each under its own opset, and the fused
model computes what the unfused one does in onnxruntime (float32: rtol 1e-5, atol 1e-6)."""

from __future__ import annotations

import numpy as np
import onnx
import onnx_ir as ir
import onnxruntime as ort
from onnx import TensorProto, helper

from onnxport.exporting.fusions.patterns import fuse_patterns

_F = TensorProto.FLOAT


def _gelu_nodes(x: str, out: str, p: str) -> list[onnx.NodeProto]:
    """``x * (0.5 * (1 + erf(x / sqrt 2)))``, decomposed (constants as Constant nodes)."""
    def const(name: str, value: float) -> onnx.NodeProto:
        return helper.make_node("Constant", [], [f"{p}{name}"], value=helper.make_tensor(f"{p}{name}", _F, [], [value]))

    return [
        const("r2", 2 ** 0.5), const("one", 1.0), const("half", 0.5),
        helper.make_node("Div", [x, f"{p}r2"], [f"{p}d"]),
        helper.make_node("Erf", [f"{p}d"], [f"{p}e"]),
        helper.make_node("Add", [f"{p}e", f"{p}one"], [f"{p}a"]),
        helper.make_node("Mul", [f"{p}half", f"{p}a"], [f"{p}h"]),
        helper.make_node("Mul", [x, f"{p}h"], [out]),
    ]


def _model() -> onnx.ModelProto:
    shape = [2, 5]
    then = helper.make_graph(_gelu_nodes("x", "t_out", "t_"), "then", [],
                             [helper.make_tensor_value_info("t_out", _F, shape)])
    els = helper.make_graph([helper.make_node("Neg", ["x"], ["e_out"])], "else", [],
                            [helper.make_tensor_value_info("e_out", _F, shape)])
    fn = helper.make_function("local", "softmax_fn", ["a"], ["b"], _gelu_nodes("a", "b", "f_"),
                              [helper.make_opsetid("", 20)])
    nodes = [
        helper.make_node("If", ["c"], ["y"], then_branch=then, else_branch=els),
        helper.make_node("softmax_fn", ["x"], ["z"], domain="local"),
    ]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("c", TensorProto.BOOL, []),
                                           helper.make_tensor_value_info("x", _F, shape)],
                              [helper.make_tensor_value_info("y", _F, shape), helper.make_tensor_value_info("z", _F, shape)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20), helper.make_opsetid("local", 1)],
                             functions=[fn])


def _run(proto: onnx.ModelProto, x: np.ndarray) -> list[np.ndarray]:
    sess = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(None, {"c": np.asarray(True), "x": x})


def _ops(nodes) -> list[str]:
    return [n.op_type for n in nodes]


def test_if_branch_and_function_body_are_fused():
    proto = _model()
    x = np.random.default_rng(0).standard_normal((2, 5)).astype(np.float32) * 3
    want = _run(proto, x)
    model = ir.serde.deserialize_model(proto)
    stats = fuse_patterns(model)
    assert stats["Gelu"] == 2, stats
    fused = ir.serde.serialize_model(model)
    onnx.checker.check_model(fused, full_check=True)
    then = next(a.g for a in fused.graph.node[0].attribute if a.name == "then_branch")
    assert _ops(then.node) == ["Gelu"], _ops(then.node)
    assert _ops(fused.functions[0].node) == ["Gelu"], _ops(fused.functions[0].node)
    for g, w in zip(_run(fused, x), want):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


def test_function_opset_gates_its_body():
    """A function importing an opset without the fused op keeps its body (Gelu is opset 20)."""
    proto = _model()
    proto.functions[0].opset_import[0].version = 19
    model = ir.serde.deserialize_model(proto)
    fuse_patterns(model)
    fn = next(iter(model.functions.values()))
    assert "Gelu" not in [n.op_type for n in fn] and "Erf" in [n.op_type for n in fn]
