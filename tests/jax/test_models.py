"""The JAX backend on whole models: light zoo models, jit/grad/vmap, params, x64 (transformers: test_transformers.py)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")
ort = pytest.importorskip("onnxruntime")

import onnxport  # noqa: E402
from onnxport.errors import ConversionError, InputError  # noqa: E402
from onnxport_jax import JaxModel  # noqa: E402
from onnxport_jax.context import DataDependentError  # noqa: E402
from onnxport_testkit.light import light_inputs, random_inputs, randomized  # noqa: E402

LIGHT = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light"


def _ort(model: onnx.ModelProto | bytes, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    data = model if isinstance(model, bytes) else model.SerializeToString()
    sess = ort.InferenceSession(data, providers=["CPUExecutionProvider"])
    return sess.run(None, feeds)


def _model(nodes, inputs, outputs, initializers=(), opset=21) -> onnx.ModelProto:
    graph = helper.make_graph(nodes, "g", inputs, outputs, initializer=list(initializers))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def _vi(name: str, elem: int, shape) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, elem, shape)


@pytest.fixture(scope="module")
def mlp() -> onnx.ModelProto:
    """x[N,4] -> Gemm(W1,b1) -> Relu -> MatMul(W2) -> y[N,3], fixed random weights."""
    rng = np.random.default_rng(0)
    w1 = rng.standard_normal((4, 8)).astype(np.float32)
    b1 = rng.standard_normal(8).astype(np.float32)
    w2 = rng.standard_normal((8, 3)).astype(np.float32)
    nodes = [
        helper.make_node("Gemm", ["x", "w1", "b1"], ["h"], name="fc1"),
        helper.make_node("Relu", ["h"], ["r"], name="act"),
        helper.make_node("MatMul", ["r", "w2"], ["y"], name="fc2"),
    ]
    return _model(
        nodes,
        [_vi("x", TensorProto.FLOAT, ["N", 4])],
        [_vi("y", TensorProto.FLOAT, ["N", 3])],
        [numpy_helper.from_array(w1, "w1"), numpy_helper.from_array(b1, "b1"), numpy_helper.from_array(w2, "w2")],
    )


# -- light zoo models ------------------------------------------------------------------------------
_dummy_inputs = light_inputs


@pytest.mark.parametrize("name", ["squeezenet", "resnet50", "inception_v1"])
def test_light_model_matches_reference_and_onnxruntime_jitted(name: str) -> None:
    path = LIGHT / f"light_{name}.onnx"
    if not path.exists():
        pytest.skip(f"onnx ships no {path.name}")
    # seeded random weights: with the shipped ones (all 0.02) every output is one repeated value
    proto = randomized(onnx.load(str(path)))
    model = onnxport.import_model(proto, backend="jax")
    assert isinstance(model, JaxModel)
    inputs = random_inputs(proto)
    ours = np.asarray(model.jit()(model.params, *inputs))
    feeds = dict(zip([i.name for i in proto.graph.input if i.name not in {t.name for t in proto.graph.initializer}], inputs))
    expected = _ort(proto, feeds)[0]
    assert ours.shape == expected.shape and ours.dtype == np.float32
    scale = float(np.abs(expected).max())
    assert np.std(expected) > 1e-3 * scale, "the reference output is nearly constant"
    np.testing.assert_allclose(ours, expected, rtol=1e-4, atol=1e-5 * scale)


def test_light_model_matches_shipped_reference() -> None:
    """Secondary: the shipped weights and the shipped output."""
    path = LIGHT / "light_squeezenet.onnx"
    proto = onnx.load(str(path))
    model = onnxport.import_model(proto, backend="jax")
    ours = np.asarray(model.jit()(model.params, *_dummy_inputs(proto)))
    shipped = numpy_helper.to_array(onnx.load_tensor(str(path).replace(".onnx", "_output_0.pb")))
    np.testing.assert_allclose(ours, shipped, rtol=1e-4, atol=1e-7)


# -- params, jit, grad, vmap ---------------------------------------------------------------------
def test_params_are_the_float_initializers_keyed_by_name(mlp) -> None:
    model = onnxport.import_model(mlp, backend="jax")
    assert set(model.params) == {"w1", "b1", "w2"}
    assert all(isinstance(p, jax.Array) for p in model.params.values())
    assert model.input_names == ["x"] and model.output_names == ["y"]
    np.testing.assert_array_equal(np.asarray(model.params["w2"]), numpy_helper.to_array(mlp.graph.initializer[2]))


def test_jit_matches_eager_and_onnxruntime(mlp) -> None:
    model = onnxport.import_model(mlp, backend="jax")
    x = np.random.default_rng(1).standard_normal((5, 4)).astype(np.float32)
    eager = np.asarray(model(x))
    jitted = np.asarray(jax.jit(model.apply)(model.params, x))
    expected = _ort(mlp, {"x": x})[0]
    np.testing.assert_allclose(eager, expected, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(jitted, expected, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(np.asarray(model(x=x)), expected, rtol=1e-5, atol=1e-5)  # by ONNX name


def test_grad_wrt_params_and_inputs(mlp) -> None:
    model = onnxport.import_model(mlp, backend="jax")
    x = jnp.asarray(np.random.default_rng(2).standard_normal((3, 4)).astype(np.float32))
    p = model.params

    def reference(params, x):  # the same network written by hand
        h = jnp.maximum(x @ params["w1"] + params["b1"], 0)
        return jnp.sum((h @ params["w2"]) ** 2)

    def loss(params, x):
        return jnp.sum(model.apply(params, x) ** 2)

    g_params, g_x = jax.jit(jax.grad(loss, argnums=(0, 1)))(p, x)
    r_params, r_x = jax.grad(reference, argnums=(0, 1))(p, x)
    assert set(g_params) == set(p)
    for k in p:
        np.testing.assert_allclose(np.asarray(g_params[k]), np.asarray(r_params[k]), rtol=1e-5, atol=1e-5)
        assert np.abs(np.asarray(g_params[k])).sum() > 0
    np.testing.assert_allclose(np.asarray(g_x), np.asarray(r_x), rtol=1e-5, atol=1e-5)


def test_vmap_over_a_stack_of_batches(mlp) -> None:
    model = onnxport.import_model(mlp, backend="jax")
    xs = np.random.default_rng(3).standard_normal((6, 2, 4)).astype(np.float32)
    batched = jax.jit(jax.vmap(model.apply, in_axes=(None, 0)))(model.params, xs)
    one_by_one = np.stack([np.asarray(model(x)) for x in xs])
    assert batched.shape == (6, 2, 3)
    np.testing.assert_allclose(np.asarray(batched), one_by_one, rtol=1e-6, atol=1e-6)


def test_shared_initializer_is_one_leaf_and_gradients_add_up() -> None:
    w = np.random.default_rng(4).standard_normal((3, 3)).astype(np.float32)
    nodes = [
        helper.make_node("MatMul", ["x", "w"], ["a"], name="first"),
        helper.make_node("MatMul", ["a", "w"], ["y"], name="second"),
    ]
    proto = _model(nodes, [_vi("x", TensorProto.FLOAT, [2, 3])], [_vi("y", TensorProto.FLOAT, [2, 3])],
                   [numpy_helper.from_array(w, "w")])
    model = onnxport.import_model(proto, backend="jax")
    assert list(model.params) == ["w"]
    x = jnp.asarray(np.random.default_rng(5).standard_normal((2, 3)).astype(np.float32))
    g = jax.grad(lambda p: jnp.sum(model.apply(p, x)))(model.params)["w"]
    ref = jax.grad(lambda w: jnp.sum(x @ w @ w))(jnp.asarray(w))  # both uses contribute
    np.testing.assert_allclose(np.asarray(g), np.asarray(ref), rtol=1e-5, atol=1e-5)


def test_replacing_params_changes_the_output(mlp) -> None:
    model = onnxport.import_model(mlp, backend="jax")
    x = np.ones((1, 4), np.float32)
    zeroed = {**model.params, "w2": jnp.zeros_like(model.params["w2"])}
    assert np.all(np.asarray(model.apply(zeroed, x)) == 0)
    assert np.any(np.asarray(model(x)) != 0)


# -- static shapes under jit ------------------------------------------------------------------------
def test_shape_subgraph_is_static_under_jit() -> None:
    """Shape -> Gather -> Concat -> Reshape is evaluated at trace time from static shapes."""
    nodes = [
        helper.make_node("Shape", ["x"], ["s"]),
        helper.make_node("Gather", ["s", "zero"], ["n"], axis=0),
        helper.make_node("Concat", ["n", "minus_one"], ["target"], axis=0),
        helper.make_node("Reshape", ["x", "target"], ["y"], name="flatten_it"),
    ]
    inits = [numpy_helper.from_array(np.array([0], np.int64), "zero"),
             numpy_helper.from_array(np.array([-1], np.int64), "minus_one")]
    proto = _model(nodes, [_vi("x", TensorProto.FLOAT, ["N", 2, 3])], [_vi("y", TensorProto.FLOAT, None)], inits)
    model = onnxport.import_model(proto, backend="jax")
    x = np.arange(24, dtype=np.float32).reshape(4, 2, 3)
    y = model.jit()(model.params, x)
    assert y.shape == (4, 6)
    np.testing.assert_array_equal(np.asarray(y), x.reshape(4, 6))


def test_data_dependent_shape_raises_naming_the_node_under_jit_only() -> None:
    nodes = [helper.make_node("Reshape", ["x", "shape"], ["y"], name="reshape_by_data")]
    proto = _model(nodes, [_vi("x", TensorProto.FLOAT, [2, 3]), _vi("shape", TensorProto.INT64, [2])],
                   [_vi("y", TensorProto.FLOAT, None)])
    model = onnxport.import_model(proto, backend="jax")
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    shape = np.array([3, 2], np.int64)
    np.testing.assert_array_equal(np.asarray(model(x, shape)), x.reshape(3, 2))  # eager: fine
    with pytest.raises(DataDependentError, match="reshape_by_data"):
        model.jit()(model.params, x, shape)
    backend = onnxport.get_backend("jax")
    (out,) = backend.run(model, [x, shape])  # the testkit path: the user's eager call
    np.testing.assert_array_equal(out, x.reshape(3, 2))


# -- 64-bit types ------------------------------------------------------------------------------------
def _int64_model() -> onnx.ModelProto:
    nodes = [helper.make_node("Add", ["a", "b"], ["c"]), helper.make_node("Cast", ["c"], ["d"], to=TensorProto.DOUBLE)]
    return _model(nodes, [_vi("a", TensorProto.INT64, [2]), _vi("b", TensorProto.INT64, [2])],
                  [_vi("c", TensorProto.INT64, [2]), _vi("d", TensorProto.DOUBLE, [2])])


@pytest.mark.skipif(jax.config.jax_enable_x64, reason="checks behaviour with jax_enable_x64 off")
def test_int64_is_kept_in_the_models_own_x64_scope() -> None:
    model = onnxport.import_model(_int64_model(), backend="jax")
    assert model.needs_x64
    a = np.array([2**40, -(2**35)], np.int64)
    b = np.array([1, 2**33], np.int64)
    c, d = model(a, b)
    assert c.dtype == jnp.int64 and d.dtype == jnp.float64
    np.testing.assert_array_equal(np.asarray(c), a + b)
    c_jit, _ = model.jit()(model.params, a, b)
    np.testing.assert_array_equal(np.asarray(c_jit), a + b)
    assert not jax.config.jax_enable_x64  # the global flag is left alone


@pytest.mark.skipif(jax.config.jax_enable_x64, reason="checks behaviour with jax_enable_x64 off")
def test_int64_is_never_truncated_silently() -> None:
    model = onnxport.import_model(_int64_model(), backend="jax")
    # x64 off: jit outside the model's scope hands over the 32-bit form (JAX's own canonicalization);
    # the model widens it exactly, so a sum past int32 is still right
    a32 = np.array([2**30, -5], np.int32)
    c, _ = jax.jit(model.apply)(model.params, a32, a32)
    np.testing.assert_array_equal(np.asarray(c).astype(np.int64), a32.astype(np.int64) * 2)
    # x64=False computes in 32 bits (tests/jax/test_x64_narrow.py): a value that needs 64 bits is refused
    big = helper.make_tensor("big", TensorProto.INT64, [2], [2**40, 1])
    wide = _model([helper.make_node("Add", ["a", "big"], ["c"])], [_vi("a", TensorProto.INT64, [2])],
                  [_vi("c", TensorProto.INT64, [2])], [big])
    with pytest.raises(ConversionError, match="jax_enable_x64"):
        onnxport.import_model(wide, backend="jax", x64=False)


def test_wrong_input_dtype_is_refused(mlp) -> None:
    model = onnxport.import_model(mlp, backend="jax")
    with pytest.raises(InputError, match="dtype"):
        model(np.ones((1, 4), np.float64))
    with pytest.raises(InputError, match="missing"):
        model()
