"""JAX export of Flax NNX modules whose call mutates their own state while it is traced: an
``nnx.RNN`` drawing its default initial carry from the module's ``Rngs`` (every cell type), a
module that draws from its ``Rngs`` where the result does not depend on the draw, a module that
counts its calls in an ``nnx.Variable``. The export neither fails nor changes the user's module;
a draw an output depends on is still refused. onnxruntime vs JAX, float32: rtol 1e-5, atol 1e-6."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import onnx
import onnx_ir as ir
import onnxruntime as ort
import pytest

import onnxport

nnx = pytest.importorskip("flax.nnx")

RTOL, ATOL = 1e-5, 1e-6
X = jax.random.normal(jax.random.key(0), (2, 7, 3))


def _snapshot(module) -> list[np.ndarray]:
    leaves = jax.tree_util.tree_leaves(nnx.state(module))
    return [np.asarray(jax.random.key_data(v) if jax.dtypes.issubdtype(v.dtype, jax.dtypes.prng_key) else v)
            for v in leaves]


def _check(module, args) -> onnx.ModelProto:
    before = _snapshot(module)
    proto = ir.serde.serialize_model(onnxport.export_model(module, args))
    onnx.checker.check_model(proto, full_check=True)
    after = _snapshot(module)
    assert len(before) == len(after)
    for b, a in zip(before, after):  # the export mutated nothing (no Rngs count, no counter)
        np.testing.assert_array_equal(a, b)
    sess = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
    got = sess.run(None, {i.name: np.asarray(a) for i, a in zip(sess.get_inputs(), args)})
    want = jax.tree_util.tree_leaves(module(*args))  # ((c, h), y): the graph outputs in that order
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, np.asarray(w), rtol=RTOL, atol=ATOL)
    return proto


@pytest.mark.parametrize("cell", ["LSTMCell", "OptimizedLSTMCell", "GRUCell", "SimpleCell"])
@pytest.mark.parametrize("reverse", [False, True], ids=["forward", "reverse"])
def test_rnn_default_carry_from_rngs(cell, reverse):
    rnn = nnx.RNN(getattr(nnx, cell)(3, 4, rngs=nnx.Rngs(0)), reverse=reverse, keep_order=True)
    proto = _check(rnn, (X,))
    assert not any(n.op_type.startswith("Random") for n in proto.graph.node)


def test_rnn_return_carry_from_rngs():
    rnn = nnx.RNN(nnx.LSTMCell(3, 4, rngs=nnx.Rngs(1)), return_carry=True)
    proto = _check(rnn, (X,))
    assert len(proto.graph.output) == 3  # (c, h) and the outputs


class _DrawsUnused(nnx.Module):
    """Draws a key from its Rngs on every call; a zeros initializer ignores it."""

    def __init__(self, rngs):
        self.rngs = rngs
        self.linear = nnx.Linear(3, 4, rngs=rngs)

    def __call__(self, x):
        bias = nnx.initializers.zeros(self.rngs.params(), (4,))
        return self.linear(x) + bias


class _CountsCalls(nnx.Module):
    """Mutates a non-parameter Variable in its call."""

    def __init__(self, rngs):
        self.linear = nnx.Linear(3, 4, rngs=rngs)
        self.calls = nnx.Variable(jnp.zeros((), jnp.int32))

    def __call__(self, x):
        self.calls.value = self.calls.value + 1
        return self.linear(x) * 2.0


@pytest.mark.parametrize("make", [_DrawsUnused, _CountsCalls])
def test_module_mutating_its_state_in_call(make):
    _check(make(nnx.Rngs(2)), (X,))


class _DrawsUsed(nnx.Module):
    def __init__(self, rngs):
        self.rngs = rngs

    def __call__(self, x):
        return x + jax.random.normal(self.rngs.noise(), x.shape)


def test_draw_an_output_depends_on_is_refused():
    with pytest.raises(onnxport.UnsupportedOpError, match="random number generation"):
        onnxport.export_model(_DrawsUsed(nnx.Rngs(3)), (X,))
