"""JAX -> ONNX export: the API forms, names, layout, patterns, dynamic shapes, x64 and round trips.

Each exported model passes ``onnx.checker`` (full check) and gives JAX's outputs in onnxruntime
(float32: rtol 1e-4, atol 1e-5) and, imported back through the JAX backend, in JAX.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import onnx
import onnx_ir as ir
import onnxruntime as ort
import pytest

import onnxport
from onnxport.errors import ConversionError, UnsupportedOpError
from onnxport.plugin.opfacts import marked_not_trainable

nnx = pytest.importorskip("flax.nnx")

RTOL, ATOL = 1e-4, 1e-5


def _proto(model: ir.Model) -> onnx.ModelProto:
    proto = ir.serde.serialize_model(model)
    onnx.checker.check_model(proto, full_check=True)
    return proto


def _ort(proto: onnx.ModelProto, *inputs) -> list[np.ndarray]:
    sess = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
    names = [i.name for i in sess.get_inputs()]
    return sess.run(None, {n: np.asarray(x) for n, x in zip(names, inputs)})


def _check(model: ir.Model, expected, *inputs, rtol=RTOL, atol=ATOL) -> onnx.ModelProto:
    proto = _proto(model)
    got = _ort(proto, *inputs)
    exp = [np.asarray(e) for e in jax.tree_util.tree_leaves(expected)]
    assert len(got) == len(exp)
    for g, e in zip(got, exp):
        np.testing.assert_allclose(g, e, rtol=rtol, atol=atol)
    back = onnxport.import_model(proto, backend="jax")
    again = back(*inputs)
    again = again if isinstance(again, tuple) else (again,)
    for g, e in zip(again, exp):
        np.testing.assert_allclose(np.asarray(g), e, rtol=rtol, atol=atol)
    return proto


def _ops(proto: onnx.ModelProto) -> list[str]:
    return [n.op_type for n in proto.graph.node]


class MLP(nnx.Module):
    def __init__(self, rngs: nnx.Rngs):
        self.layers = nnx.List([nnx.Linear(6, 16, rngs=rngs), nnx.Linear(16, 4, rngs=rngs)])
        self.bn = nnx.BatchNorm(4, rngs=rngs)

    def __call__(self, x):
        x = nnx.relu(self.layers[0](x))
        return self.bn(self.layers[1](x))


class CNN(nnx.Module):
    def __init__(self, rngs: nnx.Rngs):
        self.c1 = nnx.Conv(3, 8, (3, 3), rngs=rngs)
        self.bn = nnx.BatchNorm(8, rngs=rngs)
        self.c2 = nnx.Conv(8, 8, (3, 3), strides=2, rngs=rngs)
        self.c3 = nnx.Conv(8, 8, (3, 3), rngs=rngs)
        self.fc = nnx.Linear(8, 5, rngs=rngs)

    def __call__(self, x):
        x = nnx.relu(self.bn(self.c1(x)))
        x = nnx.max_pool(x, (2, 2), (2, 2))
        y = nnx.relu(self.c2(x))
        y = nnx.relu(self.c3(y) + y)  # residual
        y = nnx.avg_pool(y, (2, 2), (2, 2))
        return self.fc(y.mean(axis=(1, 2)))


def _trained_stats(bn) -> None:
    """Non-trivial batch statistics, so that exporting them is checked."""
    bn.mean.value = jnp.linspace(-0.5, 0.5, bn.mean.value.shape[0])
    bn.var.value = jnp.linspace(0.5, 2.0, bn.var.value.shape[0])


def test_nnx_module_params_by_state_path():
    m = MLP(nnx.Rngs(0))
    _trained_stats(m.bn)
    m.eval()
    x = jax.random.normal(jax.random.key(1), (3, 6))
    model = onnxport.export_model(m, (x,))
    proto = _check(model, m(x), x)
    names = {i.name for i in proto.graph.initializer}
    assert {"layers.0.kernel", "layers.0.bias", "layers.1.kernel", "layers.1.bias",
            "bn.mean", "bn.var", "bn.scale", "bn.bias"} <= names
    np.testing.assert_array_equal(onnx.numpy_helper.to_array(
        next(i for i in proto.graph.initializer if i.name == "bn.mean")), np.asarray(m.bn.mean.value))
    assert "Gemm" in _ops(proto)  # dot_general + bias on a matrix
    # BatchStat state is marked as no weight: an importer keeps it out of the trainable params
    assert {k for k, v in model.graph.initializers.items() if marked_not_trainable(v)} == {"bn.mean", "bn.var"}
    back = onnxport.import_model(proto, backend="jax")
    assert "bn.mean" not in back.params and "bn.scale" in back.params


def test_state_beside_params_is_no_weight():
    """Arrays a ``fn(params, x)`` closes over are state (here batch-norm statistics, folded into
    one constant): not trainable after import; a JaxModel's own state keeps its names."""
    w, mean = np.ones((4, 40), np.float32), np.linspace(0, 1, 40, dtype=np.float32)
    var = np.linspace(1, 2, 40, dtype=np.float32)

    def f(p, x):
        return ((x @ p["w"]) - jnp.asarray(mean)) / jnp.sqrt(jnp.asarray(var) + 1e-5)

    x = np.ones((2, 4), np.float32)
    model = onnxport.export_model(f, (x,), params={"w": w}, backend="jax")
    marked = [k for k, v in model.graph.initializers.items() if marked_not_trainable(v)]
    assert marked and "w" not in marked
    back = onnxport.import_model(_check(model, f({"w": w}, x), x), backend="jax")
    assert set(back.params) == {"w"}
    # without params the closed-over arrays are the weights
    g = onnxport.export_model(lambda x: x @ jnp.asarray(w), (x,), backend="jax")
    assert not any(marked_not_trainable(v) for v in g.graph.initializers.values())


def test_fn_with_params_linen_style():
    def init(key):
        k1, k2 = jax.random.split(key)
        return {"params": {"Dense_0": {"kernel": jax.random.normal(k1, (5, 7)), "bias": jnp.arange(7.0)},
                           "Dense_1": {"kernel": jax.random.normal(k2, (7, 2)), "bias": jnp.ones(2)}}}

    def apply(variables, x):
        p = variables["params"]
        h = jnp.tanh(x @ p["Dense_0"]["kernel"] + p["Dense_0"]["bias"])
        return h @ p["Dense_1"]["kernel"] + p["Dense_1"]["bias"]

    params = init(jax.random.key(0))
    x = jax.random.normal(jax.random.key(2), (4, 5))
    model = onnxport.export_model(apply, (x,), params=params)
    proto = _check(model, apply(params, x), x)
    names = [i.name for i in proto.graph.initializer]
    assert sorted(names) == ["params.Dense_0.bias", "params.Dense_0.kernel", "params.Dense_1.bias",
                             "params.Dense_1.kernel"]
    assert _ops(proto).count("Gemm") == 2


def test_linen_module_apply():
    linen = pytest.importorskip("flax.linen")

    class Net(linen.Module):
        @linen.compact
        def __call__(self, x):
            x = linen.Dense(8)(x)
            x = linen.LayerNorm()(x)
            return linen.Dense(3)(linen.gelu(x))

    net = Net()
    x = jax.random.normal(jax.random.key(0), (2, 4))
    variables = net.init(jax.random.key(1), x)
    model = onnxport.export_model(net.apply, (x,), params=variables)
    proto = _check(model, net.apply(variables, x), x)
    assert "params.Dense_0.kernel" in {i.name for i in proto.graph.initializer}


def test_plain_function_closed_over_arrays():
    w = jax.random.normal(jax.random.key(0), (6, 6))
    b = jnp.linspace(0, 1, 6)

    def f(x):
        return jax.nn.softmax(x @ w + b, axis=-1)

    x = jax.random.normal(jax.random.key(3), (2, 6))
    proto = _check(onnxport.export_model(f, (x,)), f(x), x)
    inits = list(proto.graph.initializer)
    assert any(list(i.dims) == [6, 6] for i in inits)


def test_recognised_by_inputs_and_backend_option():
    x = jnp.ones((2, 3))
    assert onnxport.backend_for(jnp.sin, (x,)) == "jax"
    model = onnxport.export_model(lambda a: jnp.sin(a) * 2, (np.ones((2, 3), np.float32),), backend="jax")
    _check(model, np.sin(np.ones((2, 3), np.float32)) * 2, np.ones((2, 3), np.float32))
    assert onnxport.backend_for(MLP(nnx.Rngs(0))) == "jax"


def test_dynamic_shapes_become_dim_params():
    m = MLP(nnx.Rngs(0))
    m.eval()
    x = jax.random.normal(jax.random.key(1), (3, 6))
    proto = _proto(onnxport.export_model(m, (x,), dynamic_shapes=({0: "batch"},)))
    dim = proto.graph.input[0].type.tensor_type.shape.dim[0]
    assert dim.dim_param == "batch"
    for n in (1, 7):
        xn = jax.random.normal(jax.random.key(n), (n, 6))
        np.testing.assert_allclose(_ort(proto, xn)[0], np.asarray(m(xn)), rtol=RTOL, atol=ATOL)


def test_dynamic_shapes_with_reshape():
    def f(x):
        return jnp.reshape(x, (x.shape[0], -1)).sum(axis=1) * x.shape[0]

    x = jnp.ones((2, 3, 4))
    proto = _proto(onnxport.export_model(f, (x,), dynamic_shapes=({0: "n"},)))
    x5 = jax.random.normal(jax.random.key(0), (5, 3, 4))
    np.testing.assert_allclose(_ort(proto, x5)[0], np.asarray(f(x5)), rtol=RTOL, atol=1e-4)


def test_opset_option():
    x = jnp.ones((2, 3))
    proto = _proto(onnxport.export_model(lambda a: jnp.tanh(a), (x,), opset=15))
    assert {o.domain: o.version for o in proto.opset_import}[""] == 15


def test_flax_cnn_transposes_cancel():
    m = CNN(nnx.Rngs(0))
    _trained_stats(m.bn)
    m.eval()
    x = jax.random.normal(jax.random.key(1), (2, 16, 16, 3))
    proto = _check(onnxport.export_model(m, (x,)), m(x), x)
    ops = _ops(proto)
    assert ops.count("Conv") == 3
    assert ops.count("Transpose") <= 2, ops  # one in (NHWC -> NCHW), at most one out
    kernel = next(i for i in proto.graph.initializer if i.name == "c1.kernel")
    assert list(kernel.dims) == [8, 3, 3, 3]  # stored in ONNX's OIHW layout under its own name


def test_tied_embedding_is_one_initializer():
    class LM(nnx.Module):
        def __init__(self, rngs):
            self.embed = nnx.Embed(20, 8, rngs=rngs)
            self.norm = nnx.LayerNorm(8, rngs=rngs)

        def __call__(self, ids):
            return self.embed.attend(self.norm(self.embed(ids)))

    m = LM(nnx.Rngs(0))
    ids = jnp.asarray([[1, 5, 7], [0, 19, 3]], dtype=jnp.int32)
    proto = _check(onnxport.export_model(m, (ids,)), m(ids), ids)
    tables = [i for i in proto.graph.initializer if list(i.dims) == [20, 8]]
    assert [t.name for t in tables] == ["embed.embedding"]


def test_control_flow_and_custom_derivatives():
    def f(x, n):
        y = jax.nn.gelu(x) + jax.nn.relu(x) + jax.nn.softplus(x)
        y = jax.lax.cond(y.sum() > 0, lambda t: t * 2, lambda t: t - 1, y)
        y = jax.lax.fori_loop(0, n, lambda i, c: c * 0.5 + i, y)
        z, ys = jax.lax.scan(lambda c, r: (c + r, c * r), jnp.zeros(x.shape[1]), x, reverse=True)
        return y, z, ys, jax.nn.logsumexp(x, axis=0)

    x = jax.random.normal(jax.random.key(0), (4, 3))
    n = jnp.asarray(3, jnp.int32)
    proto = _check(onnxport.export_model(f, (x, n)), f(x, n), x, n)
    assert {"If", "Loop"} <= set(_ops(proto))


def test_random_keys_are_refused():
    def f(x, key):
        return x + jax.random.normal(key, x.shape)

    with pytest.raises((UnsupportedOpError, ConversionError), match="random"):
        onnxport.export_model(f, (jnp.ones(3), jax.random.key(0)))


def test_unsupported_primitive_is_named():
    with pytest.raises(UnsupportedOpError, match="lax.erf_inv"):
        onnxport.export_model(jax.scipy.special.erfinv, (jnp.ones(3) * 0.5,))


def test_x64_exports_64_bit_types():
    with jax.enable_x64(True):
        x = jnp.arange(6, dtype=jnp.float64).reshape(2, 3)
        i = jnp.asarray([1, 0], dtype=jnp.int64)
        f = lambda a, b: (a * 2.5, b + 1)  # noqa: E731
        proto = _proto(onnxport.export_model(f, (x, i)))
        types = [o.type.tensor_type.elem_type for o in proto.graph.output]
        assert types == [onnx.TensorProto.DOUBLE, onnx.TensorProto.INT64]
        got = _ort(proto, x, i)
        np.testing.assert_array_equal(got[0], np.asarray(x) * 2.5)
        np.testing.assert_array_equal(got[1], np.asarray(i) + 1)
    x32 = jnp.asarray(np.arange(3))
    proto = _proto(onnxport.export_model(lambda a: a + 1, (x32,)))
    assert proto.graph.input[0].type.tensor_type.elem_type == onnx.TensorProto.INT32


def test_export_of_import_keeps_names():
    m = MLP(nnx.Rngs(0))
    m.eval()
    x = jax.random.normal(jax.random.key(1), (3, 6))
    first = _proto(onnxport.export_model(m, (x,)))
    imported = onnxport.import_model(first, backend="jax")
    again = _proto(onnxport.export_model(imported, (x,)))
    assert {i.name for i in again.graph.initializer if i.dims and len(i.dims) == 2} == {"layers.0.kernel", "layers.1.kernel"}
    assert [i.name for i in again.graph.input] == [i.name for i in first.graph.input]
    np.testing.assert_allclose(_ort(again, x)[0], np.asarray(m(x)), rtol=RTOL, atol=ATOL)


def test_import_with_x64_off_accepts_32_bit_form_of_64_bit_inputs():
    """JAX with x64 off makes every int64 array int32: an imported model takes it (widened exactly,
    computed in the model's own 64-bit scope); with x64 on the exact type is still required."""
    from onnx import TensorProto as T
    from onnx import helper as h

    graph = h.make_graph(
        [h.make_node("Gather", ["E", "ids"], ["y"], axis=0), h.make_node("Add", ["ids", "one"], ["z"])], "g",
        [h.make_tensor_value_info("ids", T.INT64, [2, 3])],
        [h.make_tensor_value_info("y", T.FLOAT, [2, 3, 4]), h.make_tensor_value_info("z", T.INT64, [2, 3])],
        [onnx.numpy_helper.from_array(np.arange(40, dtype=np.float32).reshape(10, 4), "E"),
         onnx.numpy_helper.from_array(np.asarray(1, np.int64), "one")])
    model = onnxport.import_model(h.make_model(graph, opset_imports=[h.make_opsetid("", 17)]), backend="jax")
    ids = np.asarray([[1, 2, 3], [4, 5, 9]])
    assert not jax.config.jax_enable_x64
    y, z = model(jnp.asarray(ids))  # int32: what jnp.asarray makes of int64 with x64 off
    np.testing.assert_array_equal(np.asarray(y), np.arange(40, dtype=np.float32).reshape(10, 4)[ids])
    np.testing.assert_array_equal(np.asarray(z), ids + 1)
    y2, _ = model.jit()(model.params, jnp.asarray(ids))
    np.testing.assert_array_equal(np.asarray(y2), np.asarray(y))
    from onnxport.errors import InputError

    with jax.enable_x64(True), pytest.raises(InputError, match="int64"):
        model(jnp.asarray(ids, dtype=jnp.int32))
