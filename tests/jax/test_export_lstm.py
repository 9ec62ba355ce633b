"""JAX export: a scan whose body is an LSTM step becomes one ONNX ``LSTM`` node
(:mod:`onnxport.exporting.fusions.patterns_lstm`): Flax's ``nnx.RNN`` over ``OptimizedLSTMCell`` (one product for
all gates, then a split) and ``LSTMCell`` (one product per gate), and a hand-written
``lax.scan`` (forward and reverse), with the weights packed into ``W``/``R``/``B`` initializers
in ONNX's gate order. onnxruntime vs JAX, float32: rtol 1e-5, atol 1e-6 (measured: below 1e-7;
the node adds the biases in another order). A scan that is not an LSTM stays a Loop."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import onnx
import onnx_ir as ir
import onnxruntime as ort
import pytest
from jax import lax

import onnxport

nnx = pytest.importorskip("flax.nnx")

RTOL, ATOL = 1e-5, 1e-6
X = jax.random.normal(jax.random.key(0), (2, 7, 3))


def _export(fn, args, **kw) -> onnx.ModelProto:
    proto = ir.serde.serialize_model(onnxport.export_model(fn, args, **kw))
    onnx.checker.check_model(proto, full_check=True)
    sess = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
    got = sess.run(None, {i.name: np.asarray(a) for i, a in zip(sess.get_inputs(), args)})
    want = fn(*args)
    for g, w in zip(got, want if isinstance(want, tuple) else (want,)):
        np.testing.assert_allclose(g, np.asarray(w), rtol=RTOL, atol=ATOL)
    return proto


def _ops(proto: onnx.ModelProto) -> list[str]:
    return [n.op_type for n in proto.graph.node]


class _Net(nnx.Module):
    def __init__(self, cell, *, reverse=False, carry=False):
        self.rnn = nnx.RNN(cell(3, 4, rngs=nnx.Rngs(0)), reverse=reverse, keep_order=True)
        self.carry = carry

    def __call__(self, x, c0=None, h0=None):
        if c0 is None:
            c0 = h0 = jnp.zeros((x.shape[0], 4))
        return self.rnn(x, initial_carry=(c0, h0))


@pytest.mark.parametrize("cell", ["OptimizedLSTMCell", "LSTMCell"])
@pytest.mark.parametrize("reverse", [False, True], ids=["forward", "reverse"])
def test_flax_rnn_lstm(cell, reverse):
    m = _Net(getattr(nnx, cell), reverse=reverse)
    proto = _export(m, (X,))
    assert "Loop" not in _ops(proto) and _ops(proto).count("LSTM") == 1, _ops(proto)
    lstm = next(n for n in proto.graph.node if n.op_type == "LSTM")
    # a reverse RNN (Flax flips the sequence in and out) runs the node backwards: no flips left
    assert [a.s for a in lstm.attribute if a.name == "direction"] == ([b"reverse"] if reverse else [])
    assert "Slice" not in _ops(proto), _ops(proto)
    inits = {i.name: onnx.numpy_helper.to_array(i) for i in proto.graph.initializer}
    assert lstm.input[1:4] == ["rnn.cell.W", "rnn.cell.R", "rnn.cell.B"]
    assert inits["rnn.cell.W"].shape == (1, 16, 3) and inits["rnn.cell.R"].shape == (1, 16, 4)
    assert inits["rnn.cell.B"].shape == (1, 32)
    assert not any(".kernel" in name for name in inits), sorted(inits)  # packed, not kept beside
    if cell == "LSTMCell":  # the per-gate kernels in ONNX's i, o, f, c order
        w = np.concatenate([np.asarray(getattr(m.rnn.cell, g).kernel.value).T for g in ("ii", "io", "if_", "ig")])
        np.testing.assert_array_equal(inits["rnn.cell.W"][0], w)


def test_initial_state_and_final_states():
    """A given initial (c, h) feeds the node; the final carry comes from its Y_c and Y_h."""
    cell = nnx.OptimizedLSTMCell(3, 4, rngs=nnx.Rngs(0))
    state = nnx.state(cell, nnx.Param)
    gd, rngs, _ = nnx.split(cell, nnx.RngState, ...)

    def fn(p, xs, c0, h0):
        c = nnx.merge(gd, rngs, p)

        def step(carry, x):
            carry, y = c(carry, x)
            return carry, y

        (cT, hT), ys = lax.scan(step, (c0, h0), xs)
        return ys, cT, hT

    xs = jnp.swapaxes(X, 0, 1)
    c0, h0 = jax.random.normal(jax.random.key(2), (2, 2, 4))
    args = (xs, c0, h0)
    proto = ir.serde.serialize_model(onnxport.export_model(fn, args, params=state))
    onnx.checker.check_model(proto, full_check=True)
    assert _ops(proto).count("LSTM") == 1 and "Loop" not in _ops(proto), _ops(proto)
    sess = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
    got = sess.run(None, {i.name: np.asarray(a) for i, a in zip(sess.get_inputs(), args)})
    for g, w in zip(got, fn(state, *args)):
        np.testing.assert_allclose(g, np.asarray(w), rtol=RTOL, atol=ATOL)


def _hand_lstm(reverse: bool, *, act=jnp.tanh, forget_from_h=False):
    k = jax.random.split(jax.random.key(3), 3)
    wx = jax.random.normal(k[0], (3, 16)) * 0.5
    wh = jax.random.normal(k[1], (4, 16)) * 0.5
    b = jax.random.normal(k[2], (16,)) * 0.1

    def fn(xs):
        def step(carry, x):
            h, c = carry
            z = x @ wx + h @ wh + b
            i, f, g, o = jnp.split(z, 4, axis=-1)
            c = jax.nn.sigmoid(f) * (h if forget_from_h else c) + jax.nn.sigmoid(i) * act(g)
            h = jax.nn.sigmoid(o) * jnp.tanh(c)
            return (h, c), h

        zero = jnp.zeros((xs.shape[1], 4))
        return lax.scan(step, (zero, zero), xs, reverse=reverse)[1]

    return fn


@pytest.mark.parametrize("reverse", [False, True], ids=["forward", "reverse"])
def test_hand_written_scan(reverse):
    """A ``lax.scan`` LSTM with (h, c) carried in that order; reversed: ``direction="reverse"``."""
    proto = _export(_hand_lstm(reverse), (jnp.swapaxes(X, 0, 1),))
    assert _ops(proto) == ["LSTM", "Squeeze"], _ops(proto)
    direction = [a.s for a in proto.graph.node[0].attribute if a.name == "direction"]
    assert direction == ([b"reverse"] if reverse else [])


@pytest.mark.parametrize("variant", ["relu_candidate", "forget_gate_on_h"])
def test_non_lstm_scan_stays_a_loop(variant):
    """A candidate activation other than tanh, a forget gate applied to h instead of c: no LSTM."""
    fn = _hand_lstm(False, act=jax.nn.relu) if variant == "relu_candidate" else _hand_lstm(False, forget_from_h=True)
    proto = _export(fn, (jnp.swapaxes(X, 0, 1),))
    assert "LSTM" not in _ops(proto) and "Loop" in _ops(proto), _ops(proto)


def test_fuse_false_keeps_the_loop():
    proto = _export(_Net(nnx.OptimizedLSTMCell), (X,), fuse=False)
    assert "LSTM" not in _ops(proto) and "Loop" in _ops(proto)


def test_round_trip_through_the_importer():
    m = _Net(nnx.LSTMCell)
    proto = _export(m, (X,))
    back = onnxport.import_model(proto, backend="jax")
    np.testing.assert_allclose(np.asarray(back(X)), np.asarray(m(X)), rtol=RTOL, atol=ATOL)


class _Bidirectional(nnx.Module):
    def __init__(self):
        cells = [nnx.OptimizedLSTMCell(3, 4, rngs=nnx.Rngs(i)) for i in (0, 1)]
        self.bi = nnx.Bidirectional(nnx.RNN(cells[0]), nnx.RNN(cells[1]))

    def __call__(self, x):
        z = jnp.zeros((x.shape[0], 4))
        return self.bi(x, initial_carry=((z, z), (z, z)))


def test_flax_bidirectional_is_one_node():
    """Two scans over one sequence in opposite directions: one bidirectional LSTM node whose
    weights stack the forward then the backward cell's."""
    m = _Bidirectional()
    proto = _export(m, (X,))
    ops = _ops(proto)
    assert ops.count("LSTM") == 1 and "Loop" not in ops and "Slice" not in ops, ops
    lstm = next(n for n in proto.graph.node if n.op_type == "LSTM")
    assert [a.s for a in lstm.attribute if a.name == "direction"] == [b"bidirectional"]
    inits = {i.name: onnx.numpy_helper.to_array(i) for i in proto.graph.initializer}
    assert inits[lstm.input[1]].shape == (2, 16, 3)
    back = onnxport.import_model(proto, backend="jax")
    np.testing.assert_allclose(np.asarray(back(X)), np.asarray(m(X)), rtol=RTOL, atol=ATOL)
