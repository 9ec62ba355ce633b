"""Surgery results in JAX: pruned torch.onnx exports run, to_sequential nests blocks (jit, grad)."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import helper

jax = pytest.importorskip("jax")
pytest.importorskip("torch")

import onnxport  # noqa: E402
from onnxport.edit.surgery import prune_channels  # noqa: E402
from tests.conftest import make_model, tensor_info  # noqa: E402
from tests.core import _surgery_nets as nets  # noqa: E402

SHAPES = {name: shape for name, (_, shape) in nets.NETS.items()}


def run(model, x: np.ndarray) -> np.ndarray:
    import onnx_ir as ir
    import onnxruntime as ort

    proto = model if isinstance(model, onnx.ModelProto) else ir.serde.serialize_model(model)
    sess = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(None, {"x": x})[0]


def _pruned(name: str):
    return prune_channels(nets.onnx_bytes(name, False), fraction=0.3, per="layer")


@pytest.mark.parametrize("name", ["densenet", "transformer"])
def test_pruned_model_runs_in_jax(name: str) -> None:
    if "jax" not in onnxport.backends():
        pytest.skip("the jax backend is not installed")
    pruned = _pruned(name)
    x = np.random.default_rng(3).standard_normal(SHAPES[name]).astype(np.float32)
    fn = onnxport.import_model(pruned, backend="jax")
    np.testing.assert_allclose(np.asarray(fn(x)), run(pruned, x), rtol=1e-4, atol=1e-5)


def test_to_sequential_nests_blocks_in_jax() -> None:
    if "jax" not in onnxport.backends():
        pytest.skip("the jax backend is not installed")
    from onnxport_jax.sequential import Identity, Parallel, Residual, Sequential

    model = nets.onnx_bytes("densenet", True)
    seq = onnxport.to_sequential(model, backend="jax")
    assert isinstance(seq, Sequential) and sum(isinstance(s, Parallel) for s in seq) == 3
    assert all(isinstance(s.branches[0], Identity) for s in seq if isinstance(s, Parallel))
    x = np.random.default_rng(6).standard_normal(SHAPES["densenet"]).astype(np.float32)
    y = jax.jit(seq.apply)(seq.params, x)
    np.testing.assert_allclose(np.asarray(y), run(onnx.load_from_string(model), x), rtol=1e-4, atol=1e-5)
    grads = jax.grad(lambda p: seq.apply(p, x).sum())(seq.params)
    assert jax.tree_util.tree_structure(grads) == jax.tree_util.tree_structure(seq.params)

    nodes = [helper.make_node("Relu", ["x"], ["a"], name="relu"),
             helper.make_node("Sigmoid", ["a"], ["b"], name="sig"),
             helper.make_node("Add", ["a", "b"], ["y"], name="residual")]
    small = make_model(nodes, [tensor_info("x", [2])], [tensor_info("y", [2])])
    seq = onnxport.to_sequential(small, backend="jax")
    assert isinstance(seq[1], Residual) and isinstance(seq[1].shortcut, Identity)
    v = np.array([-1.0, 2.0], np.float32)
    np.testing.assert_allclose(np.asarray(seq(v)), np.maximum(v, 0) + 1 / (1 + np.exp(-np.maximum(v, 0))), rtol=1e-6)


def test_to_sequential_keeps_a_shared_weight_one_leaf() -> None:
    if "jax" not in onnxport.backends():
        pytest.skip("the jax backend is not installed")
    from onnx import numpy_helper

    wv = np.array([[0.5, -1.0], [2.0, 0.25]], np.float32)
    nodes = [helper.make_node("MatMul", ["x", "w"], ["a"], name="first"),
             helper.make_node("Sigmoid", ["a"], ["b"], name="sig"),
             helper.make_node("MatMul", ["b", "w"], ["c"], name="second"),
             helper.make_node("Add", ["a", "c"], ["y"], name="residual")]
    small = make_model(nodes, [tensor_info("x", [3, 2])], [tensor_info("y", [3, 2])],
                       [numpy_helper.from_array(wv, "w")])
    seq = onnxport.to_sequential(small, backend="jax")
    assert list(seq.params["shared"]) == ["w"]
    leaves = jax.tree_util.tree_leaves(seq.params)
    assert len(leaves) == 1  # the one weight, once
    x = np.random.default_rng(1).standard_normal((3, 2)).astype(np.float32)
    a = x @ wv
    np.testing.assert_allclose(np.asarray(seq(x)), a + (1 / (1 + np.exp(-a))) @ wv, rtol=1e-5, atol=1e-6)
    # its gradient sums both uses: the same as the whole imported model's
    g_seq = jax.grad(lambda p: seq.apply(p, x).sum())(seq.params)["shared"]["w"]
    whole = onnxport.import_model(small, backend="jax")
    g_whole = jax.grad(lambda p: whole.apply(p, x).sum())(whole.params)["w"]
    np.testing.assert_allclose(np.asarray(g_seq), np.asarray(g_whole), rtol=1e-5, atol=1e-6)


def test_widened_inserted_and_removed_models_import_into_jax() -> None:
    if "jax" not in onnxport.backends():
        pytest.skip("the jax backend is not installed")
    from onnxport.edit.surgery import insert_layer, remove_layer, widen_channels

    edits = {
        "densenet": widen_channels(nets.onnx_bytes("densenet", False), "/block/block.1/conv/Conv", 7, init="net2net"),
        "resnet": insert_layer(nets.onnx_bytes("resnet", False), after="/blocks/blocks.0/Relu_1_output_0",
                               layer="conv", kernel_size=3),
        "mobilenet": remove_layer(nets.onnx_bytes("mobilenet", False), "/blocks/blocks.2/body/body.0/Conv"),
    }
    for name, model in edits.items():
        x = np.random.default_rng(7).standard_normal(SHAPES[name]).astype(np.float32)
        fn = onnxport.import_model(model, backend="jax")
        np.testing.assert_allclose(np.asarray(fn(x)), run(model, x), rtol=1e-4, atol=1e-5, err_msg=name)
