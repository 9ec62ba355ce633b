"""The TensorFlow kernels a channels-last CNN runs on: a grouped Conv as one Conv2D (under
oneDNN) with the split form's gradient, LRN on TensorFlow's LRN kernel, and pooling with
SAME-equal pads on TensorFlow's SAME pooling (no padded copy)."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

tf = pytest.importorskip("tensorflow", reason="the TensorFlow backend's tests run where tensorflow is installed")
import onnxruntime as ort  # noqa: E402

import onnxport  # noqa: E402
from onnxport_tensorflow.ops.import_ import conv as conv_ops  # noqa: E402

_RNG = np.random.default_rng(11)


def _ort(proto: onnx.ModelProto, x: np.ndarray) -> np.ndarray:
    sess = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(None, {"x": x})[0]


def _grouped_model(group: int, strides: int) -> onnx.ModelProto:
    """x [2, 8, 9, 9] -> Conv(3x3, group, pad 1) -> Relu -> Conv(1x1) (both run channels last)."""
    w = _RNG.uniform(-1, 1, (12, 8 // group, 3, 3)).astype(np.float32)
    b = _RNG.uniform(-1, 1, (12,)).astype(np.float32)
    w2 = _RNG.uniform(-1, 1, (5, 12, 1, 1)).astype(np.float32)
    out = (9 - 1) // strides + 1
    graph = helper.make_graph(
        [helper.make_node("Conv", ["x", "w", "b"], ["c"], kernel_shape=[3, 3], pads=[1, 1, 1, 1], group=group,
                          strides=[strides, strides]),
         helper.make_node("Relu", ["c"], ["r"]),
         helper.make_node("Conv", ["r", "w2"], ["y"], kernel_shape=[1, 1])], "grouped",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 8, 9, 9])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 5, out, out])],
        [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b"), numpy_helper.from_array(w2, "w2")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])


def _grads(model, x: np.ndarray) -> tuple[np.ndarray, list[np.ndarray]]:
    xt = tf.constant(x)
    with tf.GradientTape() as tape:
        tape.watch(xt)
        loss = tf.reduce_sum(tf.square(model.serve(xt)))
    gx, *gw = tape.gradient(loss, [xt, *model.trainable_variables])
    return gx.numpy(), [g.numpy() for g in gw]


@pytest.mark.parametrize("group,strides", [(2, 1), (4, 2)])
def test_grouped_conv_matches_the_split_form_forward_and_backward(group: int, strides: int, monkeypatch) -> None:
    proto = _grouped_model(group, strides)
    x = _RNG.standard_normal((2, 8, 9, 9)).astype(np.float32)
    native = onnxport.import_model(proto, backend="tensorflow")
    convs = [op for op in native.serve.get_concrete_function().graph.get_operations() if op.type == "Conv2D"]
    # one Conv2D per ONNX Conv under oneDNN; the grouped one as `group` Conv2Ds otherwise
    assert len(convs) == (2 if conv_ops._ONEDNN else group + 1)
    np.testing.assert_allclose(native(x).numpy(), _ort(proto, x), rtol=1e-4, atol=1e-4)
    monkeypatch.setattr(conv_ops, "_ONEDNN", False)
    split = onnxport.import_model(proto, backend="tensorflow")
    assert len([op for op in split.serve.get_concrete_function().graph.get_operations() if op.type == "Conv2D"]) == group + 1
    np.testing.assert_allclose(native(x).numpy(), split(x).numpy(), rtol=1e-5, atol=1e-5)
    gx_n, gw_n = _grads(native, x)
    gx_s, gw_s = _grads(split, x)
    assert [g.shape for g in gw_n] == [g.shape for g in gw_s] and len(gw_n) == 3  # w, b, w2
    np.testing.assert_allclose(gx_n, gx_s, rtol=1e-4, atol=1e-4)
    for a, b in zip(gw_n, gw_s):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-3)


def test_grouped_conv_native_op_gradient_equals_split_gradient() -> None:
    # the custom gradient itself, on tensors (input and filter), against the split form's
    x = tf.constant(_RNG.standard_normal((1, 7, 7, 6)).astype(np.float32))
    w = tf.constant(_RNG.standard_normal((3, 3, 2, 9)).astype(np.float32))
    dy = tf.constant(_RNG.standard_normal((1, 3, 3, 9)).astype(np.float32))
    grads = []
    for fn in (conv_ops.grouped_native, conv_ops.grouped_split):
        with tf.GradientTape() as tape:
            tape.watch([x, w])
            y = fn(x, w, [2, 2], [1, 1], 3)
        grads.append([y.numpy(), *[g.numpy() for g in tape.gradient(y, [x, w], output_gradients=dy)]])
    for a, b in zip(*grads):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)


def _lrn_reference(proto: onnx.ModelProto, x: np.ndarray, size: int) -> np.ndarray:
    """onnxruntime's output (odd windows), or numpy's LRN of its Conv output (onnxruntime has no
    even window): square sum over channels [c - (size-1)//2, c + size//2]."""
    if size % 2:
        return _ort(proto, x)
    w = numpy_helper.to_array(proto.graph.initializer[0])
    cut = helper.make_model(helper.make_graph(
        [proto.graph.node[0]], "conv", list(proto.graph.input),
        [helper.make_tensor_value_info("c", TensorProto.FLOAT, None)], [numpy_helper.from_array(w, "w")]),
        opset_imports=[helper.make_opsetid("", 21)])
    c = _ort(cut, x).astype(np.float64)
    lo, hi = (size - 1) // 2, size // 2
    sq = np.pad(c * c, [(0, 0), (lo, hi), (0, 0), (0, 0)])
    s = sum(sq[:, k:k + c.shape[1]] for k in range(size))
    return np.maximum(c / (2.0 + 1e-3 / size * s) ** 0.75, 0).astype(np.float32)


@pytest.mark.parametrize("size", [3, 5, 4])
def test_channels_last_lrn(size: int) -> None:
    # odd windows run TensorFlow's LRN kernel; an even (asymmetric) window the sum of squares
    w = _RNG.uniform(-1, 1, (16, 3, 3, 3)).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("Conv", ["x", "w"], ["c"], kernel_shape=[3, 3]),
         helper.make_node("LRN", ["c"], ["n"], size=size, alpha=1e-3, beta=0.75, bias=2.0),
         helper.make_node("Relu", ["n"], ["y"])], "lrn",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 16, 6, 6])], [numpy_helper.from_array(w, "w")])
    proto = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    x = _RNG.standard_normal((2, 3, 8, 8)).astype(np.float32)
    model = onnxport.import_model(proto, backend="tensorflow")
    np.testing.assert_allclose(model(x).numpy(), _lrn_reference(proto, x, size), rtol=1e-5, atol=1e-5)
    ops = {op.type for op in model.serve.get_concrete_function().graph.get_operations()}
    assert ("LRN" in ops) == (size % 2 == 1)
    xt = tf.constant(x)
    with tf.GradientTape() as tape:
        tape.watch(xt)
        loss = tf.reduce_sum(model.serve(xt))
    assert np.isfinite(tape.gradient(loss, xt).numpy()).all()


@pytest.mark.parametrize("op,pads,extra", [
    ("MaxPool", [0, 0, 1, 1], {}),  # SAME's pads for 3x3 / 2 on 8x8: no Pad
    ("MaxPool", [1, 1, 1, 1], {}),  # not SAME's: padded with the lowest value
    ("AveragePool", [0, 0, 1, 1], {"count_include_pad": 0}),
    ("AveragePool", [0, 0, 1, 1], {"count_include_pad": 1}),  # counts the pads: padded with zeros
    ("MaxPool", [1, 1, 1, 1], {"ceil_mode": 1}),
])
def test_pooling_with_same_pads(op: str, pads: list[int], extra: dict) -> None:
    w = _RNG.uniform(-1, 1, (16, 3, 1, 1)).astype(np.float32)
    pool = helper.make_node(op, ["c"], ["y"], kernel_shape=[3, 3], strides=[2, 2], pads=pads, **extra)
    graph = helper.make_graph(
        [helper.make_node("Conv", ["x", "w"], ["c"], kernel_shape=[1, 1]), pool], "pool",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], [numpy_helper.from_array(w, "w")])
    proto = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    x = _RNG.standard_normal((2, 3, 8, 8)).astype(np.float32)
    model = onnxport.import_model(proto, backend="tensorflow")
    np.testing.assert_allclose(model(x).numpy(), _ort(proto, x), rtol=1e-5, atol=1e-6)
    ops = {op.type for op in model.serve.get_concrete_function().graph.get_operations()}
    same = pads == [0, 0, 1, 1] and not extra.get("count_include_pad")
    assert bool(ops & {"Pad", "PadV2"}) != same
