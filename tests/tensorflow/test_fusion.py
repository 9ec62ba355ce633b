"""Inference speed forms of the TensorFlow import: a BatchNormalization folded into the Conv
that feeds it (same numbers, gradients to the same variables, training mode untouched) and the
frozen serving function."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

tf = pytest.importorskip("tensorflow")
ort = pytest.importorskip("onnxruntime")

import onnxport  # noqa: E402

_RNG = np.random.default_rng(7)


def _init(name: str, *shape: int, low: float = -1.0, high: float = 1.0) -> onnx.TensorProto:
    return numpy_helper.from_array(_RNG.uniform(low, high, shape).astype(np.float32), name)


def _conv_bn_model(bias: bool = True, shared_conv_output: bool = False) -> onnx.ModelProto:
    """x -> Conv(3x3, pad 1) -> BatchNormalization -> Relu (-> + the conv output when shared)."""
    conv_in = ["x", "w", "b"] if bias else ["x", "w"]
    nodes = [
        helper.make_node("Conv", conv_in, ["c"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("BatchNormalization", ["c", "scale", "beta", "mean", "var"], ["n"], epsilon=1e-3),
        helper.make_node("Relu", ["n"], ["r"]),
    ]
    out = "r"
    if shared_conv_output:
        nodes.append(helper.make_node("Add", ["r", "c"], ["y"]))
        out = "y"
    inits = [_init("w", 6, 4, 3, 3), _init("scale", 6, low=0.5, high=2.0), _init("beta", 6),
             _init("mean", 6), _init("var", 6, low=0.2, high=3.0)]
    if bias:
        inits.append(_init("b", 6))
    graph = helper.make_graph(nodes, "convbn", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4, 8, 8])],
                              [helper.make_tensor_value_info(out, TensorProto.FLOAT, [2, 6, 8, 8])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])


def _x() -> np.ndarray:
    return _RNG.standard_normal((2, 4, 8, 8)).astype(np.float32)


def _ort(proto: onnx.ModelProto, x: np.ndarray) -> np.ndarray:
    sess = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(None, {"x": x})[0]


def _activation_ops(model, types: set[str]) -> list:
    """Ops of ``types`` in the traced graph whose output is a batch of 2 activations (weights are
    4-D too, but lead with 3 or 6)."""
    graph = model.serve.get_concrete_function().graph
    return [op for op in graph.get_operations()
            if op.type in types and op.outputs and op.outputs[0].shape.rank == 4 and op.outputs[0].shape[0] == 2]


@pytest.mark.parametrize("bias", [True, False])
def test_folded_batch_norm_matches_onnxruntime_and_leaves_no_normalization_pass(bias: bool) -> None:
    proto = _conv_bn_model(bias)
    x = _x()
    fused = onnxport.import_model(proto, backend="tensorflow")
    plain = onnxport.import_model(proto, backend="tensorflow", fuse=False)
    np.testing.assert_allclose(fused(x).numpy(), _ort(proto, x), rtol=1e-5, atol=1e-5)
    # the unfused graph normalizes the activation (x - mean) * k + beta; the fused one does not
    assert _activation_ops(plain, {"Sub", "Mul"})
    assert not _activation_ops(fused, {"Sub", "Mul", "AddV2", "Rsqrt"})
    assert [op.type for op in _activation_ops(fused, {"Conv2D", "BiasAdd", "Relu"})] == ["Conv2D", "BiasAdd", "Relu"]


def test_conv_output_read_elsewhere_is_not_folded() -> None:
    proto = _conv_bn_model(shared_conv_output=True)
    x = _x()
    model = onnxport.import_model(proto, backend="tensorflow")
    np.testing.assert_allclose(model(x).numpy(), _ort(proto, x), rtol=1e-5, atol=1e-5)
    assert _activation_ops(model, {"Sub"})  # the normalization runs on the shared conv output


def test_folded_batch_norm_gradients_reach_the_same_variables() -> None:
    proto = _conv_bn_model()
    x = tf.constant(_x())
    grads = []
    for fuse in (True, False):
        model = onnxport.import_model(proto, backend="tensorflow", fuse=fuse)
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(model.serve(x) ** 2)
        variables = model.trainable_variables
        grads.append({v.name: g for v, g in zip(variables, tape.gradient(loss, variables))})
    assert sorted(grads[0]) == sorted(grads[1]) and len(grads[0]) >= 4
    for name, g in grads[0].items():
        assert g is not None, name
        np.testing.assert_allclose(g.numpy(), grads[1][name].numpy(), rtol=1e-4, atol=1e-4, err_msg=name)


def test_training_mode_is_not_folded() -> None:
    proto = _conv_bn_model()
    x = _x()
    fused = onnxport.import_model(proto, backend="tensorflow").train()
    plain = onnxport.import_model(proto, backend="tensorflow", fuse=False).train()
    np.testing.assert_allclose(fused(x).numpy(), plain(x).numpy(), rtol=1e-5, atol=1e-5)
    # batch statistics, not the running ones: differs from the inference output
    assert not np.allclose(fused(x).numpy(), _ort(proto, x), atol=1e-3)


def test_frozen_function_matches_serve_and_keeps_the_frozen_weights() -> None:
    proto = _conv_bn_model()
    x = tf.constant(_x())
    model = onnxport.import_model(proto, backend="tensorflow")
    frozen = model.frozen()
    expected = model.serve(x).numpy()
    np.testing.assert_allclose(frozen(x).numpy(), expected, rtol=1e-5, atol=1e-5)
    graph = frozen.concrete_function.graph
    assert not [op for op in graph.get_operations() if op.type in ("ReadVariableOp", "VarHandleOp")]
    model.weights["w"].assign(tf.zeros_like(model.weights["w"]))
    np.testing.assert_allclose(frozen(x).numpy(), expected, rtol=1e-5, atol=1e-5)
    assert not np.allclose(model.serve(x).numpy(), expected)


def _grouped_conv_bn_model(group: int, channels: int = 8, out: int = 8, kernel: int = 3) -> onnx.ModelProto:
    """x -> Conv(group=``group``, pad 1) -> BatchNormalization, every weight an initializer."""
    nodes = [
        helper.make_node("Conv", ["x", "w", "b"], ["c"], kernel_shape=[kernel, kernel], pads=[kernel // 2] * 4,
                         group=group),
        helper.make_node("BatchNormalization", ["c", "scale", "beta", "mean", "var"], ["y"], epsilon=1e-3),
    ]
    inits = [_init("w", out, channels // group, kernel, kernel), _init("b", out), _init("scale", out, low=0.5, high=2.0),
             _init("beta", out), _init("mean", out), _init("var", out, low=0.2, high=3.0)]
    graph = helper.make_graph(nodes, "gconvbn",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, channels, 8, 8])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, out, 8, 8])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])


def _weight_ops(model, types: set[str]) -> list:
    """Ops of ``types`` in the traced graph that are not on a batch of 2 activations."""
    activations = set(_activation_ops(model, types))
    graph = model.serve.get_concrete_function().graph
    return [op for op in graph.get_operations() if op.type in types and op not in activations]


@pytest.mark.parametrize("group", [1, 2, 8], ids=["ungrouped", "grouped", "depthwise"])
def test_constant_conv_and_batch_norm_are_folded_once_at_import(group: int) -> None:
    # trainable="none": every initializer is an import-time constant, as weights a graph computes
    # are (the light models'). The call then convolves with the folded, HWIO-laid-out weight: no
    # per-call normalization arithmetic, no weight Transpose
    proto = _grouped_conv_bn_model(group)
    x = np.concatenate([_x(), _x()], axis=1)
    model = onnxport.import_model(proto, backend="tensorflow", trainable="none")
    np.testing.assert_allclose(model(x).numpy(), _ort(proto, x), rtol=1e-5, atol=1e-5)
    assert not model.trainable_variables
    assert not _weight_ops(model, {"Transpose", "Rsqrt", "Mul", "Sub"})
    # ... where trainable weights are folded per call (gradients reach them)
    assert _weight_ops(onnxport.import_model(proto, backend="tensorflow"), {"Rsqrt"})
    # training mode normalizes with batch statistics from the unfolded values
    trained = onnxport.import_model(proto, backend="tensorflow", trainable="none").train()
    plain = onnxport.import_model(proto, backend="tensorflow", trainable="none", fuse=False).train()
    np.testing.assert_allclose(trained(x).numpy(), plain(x).numpy(), rtol=1e-5, atol=1e-5)


def _large_constant_conv_model() -> onnx.ModelProto:
    w = _RNG.uniform(-1, 1, (64, 4, 4, 4)).astype(np.float32)  # 4096 values: large enough to hold
    graph = helper.make_graph(
        [helper.make_node("Conv", ["x", "w"], ["c"], kernel_shape=[4, 4], pads=[1, 1, 2, 2]),
         helper.make_node("Relu", ["c"], ["y"])], "held",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 64, 8, 8])], [numpy_helper.from_array(w, "w")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])


def _conv_filters(model) -> list:
    graph = model.serve.get_concrete_function().graph
    return [op.inputs[1] for op in graph.get_operations() if op.type == "Conv2D"]


def test_constant_conv_weight_is_embedded_hwio(tmp_path) -> None:
    # a large constant Conv weight is a graph constant (oneDNN caches the blocked layout of a
    # constant filter only), laid out HWIO at import: no variable, no Transpose per call
    proto = _large_constant_conv_model()
    x = _x()
    model = onnxport.import_model(proto, backend="tensorflow", trainable="none")
    assert not model.weights
    (w,) = _conv_filters(model)
    assert w.op.type == "Const" and tuple(w.shape) == (4, 4, 4, 64)
    np.testing.assert_allclose(model(x).numpy(), _ort(proto, x), rtol=1e-5, atol=1e-5)
    assert not _weight_ops(model, {"Transpose"})
    tf.saved_model.save(model, str(tmp_path / "embedded"))
    loaded = tf.saved_model.load(str(tmp_path / "embedded"))
    np.testing.assert_allclose(loaded(tf.constant(x)).numpy(), model(x).numpy(), rtol=0, atol=0)


@pytest.mark.parametrize("how", ["option", "budget"])
def test_held_constant_conv_weight_is_laid_out_at_import(tmp_path, monkeypatch, how: str) -> None:
    # with embed_conv=False or past the embedding budget, a constant of at least 4096 values is
    # held in a non-trainable variable (not embedded in every traced graph); the Conv reads it
    # HWIO without a Transpose
    from onnxport_tensorflow import importer

    options = {"embed_conv": False} if how == "option" else {}
    if how == "budget":
        monkeypatch.setattr(importer, "_EMBED_CONV_BYTES", 4096 * 4 - 1)
    proto = _large_constant_conv_model()
    x = _x()
    model = onnxport.import_model(proto, backend="tensorflow", trainable="none", **options)
    held = [v for v in model.weights.values() if not v.trainable]
    assert len(held) == 1 and tuple(held[0].shape) == (4, 4, 4, 64)  # HWIO
    np.testing.assert_allclose(model(x).numpy(), _ort(proto, x), rtol=1e-5, atol=1e-5)
    assert not _weight_ops(model, {"Transpose"})
    tf.saved_model.save(model, str(tmp_path / "held"))
    loaded = tf.saved_model.load(str(tmp_path / "held"))
    np.testing.assert_allclose(loaded(tf.constant(x)).numpy(), model(x).numpy(), rtol=0, atol=0)
