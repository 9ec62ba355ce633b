"""Model-local ONNX functions: one reusable submodule per function, weights shared across calls."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
import torch
from onnx import TensorProto, helper, numpy_helper

import onnxport
from onnxport.errors import UnsupportedOpError

from ..conftest import tensor_info


def _model(with_attr_function: bool = False) -> onnx.ModelProto:
    """y = F(F(x, w), w) + G(x) where F(a, w) = Relu(a @ w) * 2 and G(a) = LeakyRelu(a)."""
    two = helper.make_tensor("two", TensorProto.FLOAT, [], [2.0])
    f = helper.make_function(
        "local", "F", ["a", "w"], ["out"],
        [
            helper.make_node("MatMul", ["a", "w"], ["m"]),
            helper.make_node("Relu", ["m"], ["r"]),
            helper.make_node("Constant", [], ["c"], value=two),
            helper.make_node("Mul", ["r", "c"], ["out"]),
        ],
        [helper.make_opsetid("", 21)],
    )
    functions = [f]
    nodes = [
        helper.make_node("F", ["x", "w"], ["h1"], domain="local", name="call1"),
        helper.make_node("F", ["h1", "w"], ["h2"], domain="local", name="call2"),
    ]
    if with_attr_function:
        alpha = helper.make_attribute_ref("alpha", onnx.AttributeProto.FLOAT)
        leaky = helper.make_node("LeakyRelu", ["a"], ["out"])
        leaky.attribute.append(alpha)
        g = helper.make_function("local", "G", ["a"], ["out"], [leaky], [helper.make_opsetid("", 21)],
                                 attributes=["alpha"])
        functions.append(g)
        nodes.append(helper.make_node("G", ["x"], ["g"], domain="local", name="call3", alpha=0.25))
        nodes.append(helper.make_node("Add", ["h2", "g"], ["y"], name="add"))
    else:
        nodes[-1].output[0] = "y"
    rng = np.random.default_rng(0)
    w = numpy_helper.from_array(rng.standard_normal((4, 4)).astype(np.float32) * 0.5, "w")
    graph = helper.make_graph(nodes, "g", [tensor_info("x", ["n", 4])], [tensor_info("y", ["n", 4])], [w])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21), helper.make_opsetid("local", 1)],
                              functions=functions)
    model.ir_version = 10
    return model


def _ort(model: onnx.ModelProto, x: np.ndarray) -> np.ndarray:
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(None, {"x": x})[0]


def test_function_is_one_submodule_called_twice():
    model = _model()
    m = onnxport.import_model(model)
    calls = [n for n in m.graph.nodes if n.op == "call_module" and "onnx_functions" in str(n.target)]
    assert len(calls) == 2 and len({n.target for n in calls}) == 1
    fn = m.get_submodule(str(calls[0].target))
    assert isinstance(fn, torch.fx.GraphModule) and fn.onnx_function == "local::F"
    assert len(list(m.parameters())) == 1  # w, passed to the function as an input, stays one Parameter
    x = np.random.default_rng(1).standard_normal((3, 4)).astype(np.float32)
    with torch.no_grad():
        y = m(torch.from_numpy(x)).numpy()
    np.testing.assert_allclose(y, _ort(model, x), rtol=1e-5, atol=1e-5)


def test_gradient_of_shared_weight_sums_both_calls():
    m = onnxport.import_model(_model())
    (w,) = list(m.parameters())
    x = torch.randn(5, 4)
    m(x).sum().backward()
    wt = w.detach().clone().requires_grad_(True)

    def f(a):
        return torch.relu(a @ wt) * 2

    f(f(x)).sum().backward()
    torch.testing.assert_close(w.grad, wt.grad)


def test_inline_when_asked_and_with_attribute_parameters():
    model = _model(with_attr_function=True)
    x = np.random.default_rng(2).standard_normal((2, 4)).astype(np.float32)
    kept = onnxport.import_model(model)
    targets = {str(n.target) for n in kept.graph.nodes if n.op == "call_module"}
    assert any("F" in t for t in targets) and not any("G" in t for t in targets)  # G (alpha) inlined
    inlined = onnxport.import_model(model, keep_functions=False)
    assert not any(n.op == "call_module" and "onnx_functions" in str(n.target) for n in inlined.graph.nodes)
    ref = _ort(model, x)
    with torch.no_grad():
        for m in (kept, inlined):
            np.testing.assert_allclose(m(torch.from_numpy(x)).numpy(), ref, rtol=1e-5, atol=1e-5)


def test_unsupported_op_inside_a_kept_function_is_reported():
    model = _model()
    model.functions[0].node[1].op_type = "NoSuchOp"
    with pytest.raises(UnsupportedOpError, match="NoSuchOp"):
        onnxport.import_model(model)
