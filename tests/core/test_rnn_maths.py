"""The core's recurrent cells and activation resolution (onnxport.opmath.rnn) against onnxruntime
(the ONNX reference implementation ignores ``clip`` and ``linear_before_reset``)."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import helper

from onnxport.opmath.rnn import activation_specs, gru_cell, lstm_cell, reversed_directions, rnn_cell


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


def _mm(x, w):
    return x @ w.T


def _reference(op, x, w, r, b, **attrs):
    names = ["X", "W", "R", "B"]
    node = helper.make_node(op, names, ["Y", "Y_h"], **attrs)
    inputs = [helper.make_tensor_value_info(n, onnx.TensorProto.FLOAT, a.shape) for n, a in zip(names, (x, w, r, b))]
    outputs = [helper.make_tensor_value_info(n, onnx.TensorProto.FLOAT, None) for n in ("Y", "Y_h")]
    model = helper.make_model(helper.make_graph([node], "g", inputs, outputs),
                              opset_imports=[helper.make_opsetid("", 22)])
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(None, {"X": x, "W": w, "R": r, "B": b})


def _run(cell, x, states):
    ys = []
    for t in range(x.shape[0]):
        states = cell(x[t], states)
        ys.append(states[0])
    return np.stack(ys)[:, None]  # [T, 1, B, H]


@pytest.mark.parametrize("op,gates,extra", [
    ("RNN", 1, {}),
    ("GRU", 3, {"linear_before_reset": 0}),
    ("GRU", 3, {"linear_before_reset": 1}),
    ("LSTM", 4, {}),
])
def test_cells_match_reference(op, gates, extra):
    rng = np.random.default_rng(1)
    T, B, C, H = 4, 2, 3, 5
    x = rng.standard_normal((T, B, C)).astype(np.float32)
    w = rng.standard_normal((1, gates * H, C)).astype(np.float32)
    r = rng.standard_normal((1, gates * H, H)).astype(np.float32)
    b = rng.standard_normal((1, 2 * gates * H)).astype(np.float32)
    want_y, want_h = _reference(op, x, w, r, b, hidden_size=H, clip=2.0, **extra)

    def clip(v):
        return np.clip(v, -2.0, 2.0)

    h0 = np.zeros((B, H), np.float32)
    if op == "RNN":
        cell, states = rnn_cell(_mm, clip, np.tanh, w[0], r[0], b[0, :H] + b[0, H:]), (h0,)
    elif op == "GRU":
        cell = gru_cell(_mm, clip, _sigmoid, np.tanh, w[0], r[0], b[0, :3 * H], b[0, 3 * H:], H,
                        extra["linear_before_reset"])
        states = (h0,)
    else:
        cell = lstm_cell(_mm, clip, _sigmoid, np.tanh, np.tanh, w[0], r[0], b[0, :4 * H] + b[0, 4 * H:],
                         np.zeros(3 * H, np.float32), H, 0)
        states = (h0, h0)
    y = _run(cell, x, states)
    np.testing.assert_allclose(y, want_y, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(y[-1], want_h, rtol=1e-5, atol=1e-5)


def test_activation_specs():
    # one direction's list serves both; alphas/betas go to the activations that take them, in order
    specs = activation_specs(["sigmoid", "LeakyRelu"], ["Sigmoid", "Tanh"], 2, [0.3], None)
    assert specs == [[("Sigmoid", 0.0, 0.0), ("LeakyRelu", 0.3, 0.0)],
                     [("Sigmoid", 0.0, 0.0), ("LeakyRelu", 0.01, 0.0)]]
    assert activation_specs(None, ["Tanh"], 1, None, None) == [[("Tanh", 0.0, 0.0)]]
    assert activation_specs(["HardSigmoid"], ["Tanh"], 1, None, [0.7]) == [[("HardSigmoid", 0.2, 0.7)]]
    with pytest.raises(ValueError, match="unknown recurrent activation"):
        activation_specs(["Gelu"], ["Tanh"], 1, None, None)
    assert reversed_directions("reverse") == [True]
    assert reversed_directions("bidirectional") == [False, True]
