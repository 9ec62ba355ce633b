"""JAX export with ``functions=True``: nested ``jit`` calls (``jax.jit``-decorated inner functions,
``nnx.jit`` submodule calls) become calls of model-local functions, one per traced body; the model
passes ``onnx.checker`` (full check) and gives JAX's outputs in onnxruntime and, imported back, in
JAX (float32: rtol 1e-4, atol 1e-5)."""

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

RTOL, ATOL = 1e-4, 1e-5


@jax.jit
def _block(x, w):
    return jnp.tanh(x @ w) + x


@jax.jit
def _outer(x, w):
    return _block(_block(x, w), w) * 2


def _check(fn, *inputs, **options) -> onnx.ModelProto:
    proto = ir.serde.serialize_model(onnxport.export_model(fn, inputs, **options))
    onnx.checker.check_model(proto, full_check=True)
    sess = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
    got = sess.run(None, {i.name: np.asarray(x) for i, x in zip(sess.get_inputs(), inputs)})
    exp = [np.asarray(e) for e in jax.tree_util.tree_leaves(fn(*inputs))]
    for g, e in zip(got, exp):
        np.testing.assert_allclose(g, e, rtol=RTOL, atol=ATOL)
    back = onnxport.import_model(proto, backend="jax")(*inputs)
    for g, e in zip(back if isinstance(back, tuple) else (back,), exp):
        np.testing.assert_allclose(np.asarray(g), e, rtol=RTOL, atol=ATOL)
    return proto


def test_jitted_inner_functions_are_functions():
    w = jax.random.normal(jax.random.key(0), (8, 8)) * 0.3
    x = jax.random.normal(jax.random.key(1), (4, 8))

    def f(x):
        return _outer(x, w) + _block(x, w)

    proto = _check(f, x, functions=True)
    bodies = {fn.name: [n.op_type for n in fn.node] for fn in proto.functions}
    assert set(bodies) == {"_block", "_outer"}, bodies
    assert bodies["_block"] == ["MatMul", "Tanh", "Add"]
    assert bodies["_outer"].count("_block") == 2  # a nested call of the other function
    assert [n.op_type for n in proto.graph.node] == ["_outer", "_block", "Add"]
    inlined = _check(f, x)
    assert not inlined.functions and "_block" not in {n.op_type for n in inlined.graph.node}


class Layer(nnx.Module):
    def __init__(self, rngs):
        self.fc = nnx.Linear(6, 6, rngs=rngs)

    def __call__(self, x):
        return nnx.relu(self.fc(x)) + x


class Net(nnx.Module):
    def __init__(self, rngs):
        self.layers = nnx.List([Layer(rngs) for _ in range(3)])

    def __call__(self, x):
        for layer in self.layers:
            x = nnx.jit(lambda m, y: m(y))(layer, x)  # a submodule called under jit
        return x


def test_nnx_submodules_under_jit_share_one_function():
    m = Net(nnx.Rngs(0))
    x = jax.random.normal(jax.random.key(1), (2, 6))
    proto = _check(m, x, functions=True)
    names = sorted(f.name for f in proto.functions)
    assert names == ["_lambda_", "relu"], names  # jax.nn.relu is jitted too: called in the body
    calls = [n for n in proto.graph.node if n.domain == proto.functions[0].domain]
    assert len(calls) == 3 and all(n.op_type == "_lambda_" for n in calls)
    weights = {i.name for i in proto.graph.initializer}
    assert {"layers.0.fc.kernel", "layers.2.fc.bias"} <= weights  # parameters stay named initializers


def test_symbolic_shapes_inline_the_calls():
    """A function body cannot read the graph's symbolic sizes: such calls are inlined."""
    w = jax.random.normal(jax.random.key(0), (8, 8)) * 0.3
    x = jax.random.normal(jax.random.key(1), (4, 8))
    proto = ir.serde.serialize_model(onnxport.export_model(lambda x: _block(x, w), (x,), functions=True,
                                                           dynamic_shapes=({0: "batch"},)))
    onnx.checker.check_model(proto, full_check=True)
    assert not proto.functions and proto.graph.input[0].type.tensor_type.shape.dim[0].dim_param == "batch"
