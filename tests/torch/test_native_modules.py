"""Nodes with initializer weights import as native torch layers that match onnxruntime and train."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
import torch
from onnx import TensorProto, helper, numpy_helper
from torch import nn

import onnxport

RNG = np.random.default_rng(0)


def _model(nodes, inputs, outputs, inits, opset=22):
    graph = helper.make_graph(nodes, "g", inputs, outputs, [numpy_helper.from_array(v, k) for k, v in inits.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 10
    onnx.checker.check_model(model)
    return model


def _info(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def _w(*shape):
    return RNG.standard_normal(shape).astype(np.float32) * 0.5


def _reference(model, feeds):
    """onnxruntime's outputs; onnx's reference evaluator where onnxruntime lacks the form."""
    try:
        sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    except Exception:  # noqa: BLE001 - e.g. batch-first (layout=1) recurrent ops
        from onnx.reference import ReferenceEvaluator

        return ReferenceEvaluator(model).run(None, feeds)
    return sess.run(None, feeds)


def _check(model, feeds, module_type, *, train_grad=True):
    """Import, assert the native layer type, compare with onnxruntime, check gradients reach it."""
    imported = onnxport.import_model(model, backend="torch")
    layers = [m for m in imported.modules() if isinstance(m, module_type)]
    assert layers, f"no {module_type.__name__} in {[type(m).__name__ for m in imported.modules()]}"
    expected = _reference(model, feeds)
    with torch.no_grad():
        got = imported(*[torch.from_numpy(v) for v in feeds.values()])
    got = list(got) if isinstance(got, tuple) else [got]
    for e, g in zip(expected, got):
        assert g.shape == e.shape
        assert np.max(np.abs(g.numpy() - e)) < 1e-4
    if train_grad:
        out = imported(*[torch.from_numpy(v) for v in feeds.values()])
        out = out[0] if isinstance(out, tuple) else out
        out.square().sum().backward()
        params = list(layers[0].parameters())
        assert params and all(p.grad is not None and torch.any(p.grad != 0) for p in params)
    return imported, layers[0]


def test_conv2d():
    w, b = _w(4, 3, 3, 3), _w(4)
    model = _model([helper.make_node("Conv", ["x", "w", "b"], ["y"], pads=[1, 1, 1, 1], strides=[2, 2])],
                   [_info("x", [1, 3, 8, 8])], [_info("y", [1, 4, 4, 4])], {"w": w, "b": b})
    _, conv = _check(model, {"x": _w(1, 3, 8, 8)}, nn.Conv2d)
    assert conv.stride == (2, 2) and conv.padding == (1, 1)


def test_conv_transpose2d():
    w, b = _w(3, 2, 3, 3), _w(2)
    model = _model([helper.make_node("ConvTranspose", ["x", "w", "b"], ["y"], strides=[2, 2], pads=[1, 1, 1, 1],
                                     output_padding=[1, 1])],
                   [_info("x", [1, 3, 5, 5])], [_info("y", [1, 2, 10, 10])], {"w": w, "b": b})
    _check(model, {"x": _w(1, 3, 5, 5)}, nn.ConvTranspose2d)


def test_gemm_linear_is_replaceable():
    w, b = _w(5, 4), _w(5)
    model = _model([helper.make_node("Gemm", ["x", "fc.weight", "fc.bias"], ["y"], transB=1)],
                   [_info("x", [2, 4])], [_info("y", [2, 5])], {"fc.weight": w, "fc.bias": b})
    imported, _ = _check(model, {"x": _w(2, 4)}, nn.Linear)
    assert isinstance(imported.fc, nn.Linear)
    imported.fc = nn.Linear(4, 7)
    assert imported(torch.randn(2, 4)).shape == (2, 7)


def test_batchnorm_train_eval():
    c = 3
    inits = {"s": _w(c), "b": _w(c), "m": _w(c), "v": np.abs(_w(c)) + 0.5}
    model = _model([helper.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], ["y"])],
                   [_info("x", [4, c, 5, 5])], [_info("y", [4, c, 5, 5])], inits)
    imported, bn = _check(model, {"x": _w(4, c, 5, 5)}, nn.BatchNorm2d)
    x = torch.randn(4, c, 5, 5) * 3 + 1
    running = bn.running_mean.clone()
    with torch.no_grad():
        eval_out = imported(x)
        imported.train()
        train_out = imported(x)
    # training mode normalizes with batch statistics and updates the running mean
    dims = (0, 2, 3)
    normed = (train_out - bn.bias.reshape(1, -1, 1, 1)) / bn.weight.reshape(1, -1, 1, 1)
    assert torch.allclose(normed.mean(dim=dims), torch.zeros(c), atol=1e-4)
    assert not torch.allclose(eval_out, train_out)
    assert not torch.allclose(bn.running_mean, running)
    imported.eval()
    with torch.no_grad():
        assert not torch.allclose(imported(x), eval_out)  # the running stats moved


def test_layernorm():
    model = _model([helper.make_node("LayerNormalization", ["x", "g", "b"], ["y"], axis=-1, epsilon=1e-5)],
                   [_info("x", [2, 3, 6])], [_info("y", [2, 3, 6])], {"g": _w(6), "b": _w(6)}, opset=17)
    _, ln = _check(model, {"x": _w(2, 3, 6)}, nn.LayerNorm)
    assert tuple(ln.normalized_shape) == (6,)


def test_dropout_train_eval():
    ratio = np.array(0.5, dtype=np.float32)
    model = _model([helper.make_node("Dropout", ["x", "r"], ["y"])], [_info("x", [64, 64])], [_info("y", [64, 64])],
                   {"r": ratio})
    imported = onnxport.import_model(model, backend="torch")
    assert any(isinstance(m, nn.Dropout) for m in imported.modules())
    x = torch.ones(64, 64)
    assert torch.equal(imported(x), x)
    imported.train()
    y = imported(x)
    zeros = (y == 0).float().mean().item()
    assert 0.3 < zeros < 0.7 and torch.allclose(y[y != 0], torch.full_like(y[y != 0], 2.0))
    imported.eval()
    assert torch.equal(imported(x), x)


def _recurrent_model(op, gates, *, bidirectional=False, layout=0, with_states=False, linear_before_reset=1):
    t, b, i, h = 5, 2, 3, 4
    d = 2 if bidirectional else 1
    inits = {"W": _w(d, gates * h, i), "R": _w(d, gates * h, h), "B": _w(d, 2 * gates * h)}
    ins = ["x", "W", "R", "B", "", ""]
    feeds = {"x": _w(*((b, t, i) if layout else (t, b, i)))}
    inputs = [_info("x", list(feeds["x"].shape))]
    state = [b, d, h] if layout else [d, b, h]
    if with_states:
        ins[5] = "h0"
        feeds["h0"] = _w(*state)
        inputs.append(_info("h0", state))
        if op == "LSTM":
            ins.append("c0")
            feeds["c0"] = _w(*state)
            inputs.append(_info("c0", state))
    attrs = {"hidden_size": h, "layout": layout, "direction": "bidirectional" if bidirectional else "forward"}
    if op == "GRU":
        attrs["linear_before_reset"] = linear_before_reset
    outs = ["y", "y_h"] + (["y_c"] if op == "LSTM" else [])
    ydims = [b, t, d, h] if layout else [t, d, b, h]
    outputs = [_info("y", ydims), _info("y_h", state)] + ([_info("y_c", state)] if op == "LSTM" else [])
    node = helper.make_node(op, ins, outs, **attrs)
    return _model([node], inputs, outputs, inits), feeds


@pytest.mark.parametrize("op,gates", [("RNN", 1), ("GRU", 3), ("LSTM", 4)])
@pytest.mark.parametrize("bidirectional,layout,with_states", [(False, 0, False), (True, 0, True), (True, 1, True)])
def test_recurrent(op, gates, bidirectional, layout, with_states):
    """torch's fused kernel on the ONNX-layout weights, each kept under its initializer name."""
    from onnxport_torch.ops.import_._modules import OnnxRecurrent

    model, feeds = _recurrent_model(op, gates, bidirectional=bidirectional, layout=layout, with_states=with_states)
    imported, layer = _check(model, feeds, OnnxRecurrent)
    assert layer.num_dir == (2 if bidirectional else 1) and layer.batch_first == bool(layout)
    state = imported.state_dict()
    for init in model.graph.initializer:  # every weight under its ONNX name, value unchanged
        key = imported.initializer_keys[init.name]
        np.testing.assert_array_equal(state[key].numpy(), numpy_helper.to_array(init))


def test_gru_linear_before_reset_0_is_functional():
    model, feeds = _recurrent_model("GRU", 3, linear_before_reset=0)
    imported = onnxport.import_model(model, backend="torch")
    from onnxport_torch.ops.import_._modules import OnnxRecurrent

    assert not any(isinstance(m, OnnxRecurrent) for m in imported.modules())
    expected = _reference(model, feeds)
    with torch.no_grad():
        got = imported(torch.from_numpy(feeds["x"]))
    for e, g in zip(expected, got):
        assert np.max(np.abs(g.numpy() - e)) < 1e-4
