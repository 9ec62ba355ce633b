"""Graph surgery in the core: extract, remove_node, replace_node, prune, linear_order."""

from __future__ import annotations

import numpy as np
import onnx
import onnx_ir as ir
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

import onnxport
from onnxport.edit.graph import linear_order
from onnxport.errors import ModelError

from ..conftest import make_model, tensor_info


def _run(model: ir.Model, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    proto = ir.serde.serialize_model(model)
    onnx.checker.check_model(proto, full_check=True)
    sess = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(None, feeds)


@pytest.fixture
def branchy() -> onnx.ModelProto:
    """x -> fc1 (Gemm) -> h -> relu -> r -> fc2 -> y ; h -> sigmoid -> s ; y + s -> z ; plus a dead node."""
    rng = np.random.default_rng(0)
    inits = [
        numpy_helper.from_array(rng.standard_normal((8, 4)).astype(np.float32), "fc1.weight"),
        numpy_helper.from_array(rng.standard_normal((8, 8)).astype(np.float32), "fc2.weight"),
        numpy_helper.from_array(rng.standard_normal((8,)).astype(np.float32), "unused.bias"),
    ]
    nodes = [
        helper.make_node("Gemm", ["x", "fc1.weight"], ["h"], name="fc1", transB=1),
        helper.make_node("Relu", ["h"], ["r"], name="relu"),
        helper.make_node("Gemm", ["r", "fc2.weight"], ["y"], name="fc2", transB=1),
        helper.make_node("Sigmoid", ["h"], ["s"], name="sig"),
        helper.make_node("Add", ["y", "s"], ["z"], name="add"),
        helper.make_node("Neg", ["h"], ["dead"], name="dead"),
    ]
    return make_model(nodes, [tensor_info("x", ["batch", 4])], [tensor_info("z", ["batch", 8])], inits)


def _reference(x: np.ndarray, model: onnx.ModelProto) -> dict[str, np.ndarray]:
    w = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    h = x @ w["fc1.weight"].T
    r = np.maximum(h, 0)
    y = r @ w["fc2.weight"].T
    s = 1 / (1 + np.exp(-h))
    return {"h": h, "r": r, "y": y, "s": s, "z": y + s}


def test_extract_feature_extractor(branchy):
    x = np.random.default_rng(1).standard_normal((3, 4)).astype(np.float32)
    sub = onnxport.extract(branchy, inputs=["x"], outputs=["r"])
    assert [n.name for n in sub.graph] == ["fc1", "relu"]
    assert list(sub.graph.initializers) == ["fc1.weight"]
    (r,) = _run(sub, {"x": x})
    np.testing.assert_allclose(r, _reference(x, branchy)["r"], rtol=1e-5, atol=1e-5)
    # the caller's model is untouched
    assert len(branchy.graph.node) == 6


def test_extract_cut_in_the_middle(branchy):
    x = np.random.default_rng(2).standard_normal((2, 4)).astype(np.float32)
    ref = _reference(x, branchy)
    sub = onnxport.extract(branchy, inputs=["h"], outputs=["z", "s"])
    assert [v.name for v in sub.graph.inputs] == ["h"]
    assert sorted(n.name for n in sub.graph) == ["add", "fc2", "relu", "sig"]
    z, s = _run(sub, {"h": ref["h"]})
    np.testing.assert_allclose(z, ref["z"], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(s, ref["s"], rtol=1e-5, atol=1e-5)


def test_extract_names_the_unreachable_value(branchy):
    with pytest.raises(ModelError, match=r"output 'z' depends on 'x'.*given inputs \('r'\)"):
        onnxport.extract(branchy, inputs=["r"], outputs=["z"])
    with pytest.raises(ModelError, match="'nope' is not a value"):
        onnxport.extract(branchy, inputs=["x"], outputs=["nope"])


def test_remove_node_passes_input_through(branchy):
    x = np.random.default_rng(3).standard_normal((2, 4)).astype(np.float32)
    ref = _reference(x, branchy)
    m = onnxport.remove_node(branchy, "relu")
    assert "relu" not in [n.name for n in m.graph]
    (z,) = _run(m, {"x": x})
    h = ref["h"]
    w2 = numpy_helper.to_array(branchy.graph.initializer[1])
    np.testing.assert_allclose(z, h @ w2.T + ref["s"], rtol=1e-5, atol=1e-5)


def test_remove_node_keeps_graph_output_name(branchy):
    m = onnxport.remove_node(branchy, "add")
    assert [v.name for v in m.graph.outputs] == ["z"]
    x = np.ones((1, 4), np.float32)
    (z,) = _run(m, {"x": x})
    np.testing.assert_allclose(z, _reference(x, branchy)["y"], rtol=1e-5, atol=1e-5)


def test_remove_node_errors(branchy):
    with pytest.raises(ModelError, match="no node named 'nope'"):
        onnxport.remove_node(branchy, "nope")
    with pytest.raises(ModelError, match="no input 3"):
        onnxport.remove_node(branchy, "relu", passthrough_input=3)
    model = make_model(
        [helper.make_node("Cast", ["x"], ["y"], name="cast", to=TensorProto.INT64)],
        [tensor_info("x", [2])],
        [tensor_info("y", [2], TensorProto.INT64)],
    )
    with pytest.raises(ModelError, match="would change a dtype"):
        onnxport.remove_node(model, "cast")


def test_replace_node(branchy):
    x = np.random.default_rng(4).standard_normal((2, 4)).astype(np.float32)
    ref = _reference(x, branchy)
    m = onnxport.replace_node(branchy, "relu", helper.make_node("Tanh", ["h"], ["whatever"], name="tanh"))
    tanh = [n for n in m.graph if n.op_type == "Tanh"]
    assert len(tanh) == 1 and tanh[0].outputs[0].name == "r"  # the old output's name is kept
    (z,) = _run(m, {"x": x})
    w2 = numpy_helper.to_array(branchy.graph.initializer[1])
    np.testing.assert_allclose(z, np.tanh(ref["h"]) @ w2.T + ref["s"], rtol=1e-5, atol=1e-5)


def test_replace_node_rejects_cycles_and_unknown_values(branchy):
    with pytest.raises(ModelError, match="cycle"):
        onnxport.replace_node(branchy, "relu", helper.make_node("Add", ["h", "z"], ["r"]))
    with pytest.raises(ModelError, match="'missing' is not a value"):
        onnxport.replace_node(branchy, "relu", helper.make_node("Relu", ["missing"], ["r"]))


def test_prune_drops_dead_nodes_and_initializers(branchy):
    m = onnxport.prune(branchy)
    names = [n.name for n in m.graph]
    assert "dead" not in names and len(names) == 5
    assert "unused.bias" not in m.graph.initializers
    x = np.ones((2, 4), np.float32)
    np.testing.assert_allclose(_run(m, {"x": x})[0], _reference(x, branchy)["z"], rtol=1e-5, atol=1e-5)


def test_linear_order(mlp_model, branchy):
    assert [n.name for n in linear_order(onnxport.load(mlp_model))] == ["fc1", "relu", "fc2"]
    with pytest.raises(ModelError, match=r"value 'h' feeds several nodes.*branching at node 'relu'"):
        linear_order(onnxport.load(branchy))
