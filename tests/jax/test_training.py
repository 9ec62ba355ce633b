"""The JAX backend for training: PRNG keys per call, train/eval mode, vmap and grad on models."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")

import onnxport  # noqa: E402
from onnxport.errors import InputError  # noqa: E402

LIGHT = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light"


def _model(nodes, inputs, outputs, initializers=(), opset=21) -> onnx.ModelProto:
    graph = helper.make_graph(nodes, "g", inputs, outputs, initializer=list(initializers))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def _vi(name: str, elem: int, shape) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, elem, shape)


def _dropout_model(**attrs) -> onnx.ModelProto:
    nodes = [helper.make_node("Dropout", ["x", "ratio"], ["y"], name="drop", **attrs)]
    return _model(nodes, [_vi("x", TensorProto.FLOAT, [4, 64])], [_vi("y", TensorProto.FLOAT, [4, 64])],
                  [numpy_helper.from_array(np.array(0.5, np.float32), "ratio")])


X = np.ones((4, 64), np.float32)


# -- randomness ------------------------------------------------------------------------------------
def test_jitted_dropout_draws_a_new_mask_per_key_and_the_same_for_the_same_key() -> None:
    model = onnxport.import_model(_dropout_model(), backend="jax").train()
    f = model.jit()
    a = np.asarray(f(model.params, X, rng=jax.random.key(0)))
    b = np.asarray(f(model.params, X, rng=jax.random.key(1)))
    a2 = np.asarray(f(model.params, X, rng=jax.random.key(0)))
    assert set(np.unique(a)) == {0.0, 2.0}  # kept values scaled by 1 / (1 - 0.5)
    assert 0.3 < (a == 0).mean() < 0.7
    assert (a != b).any()
    np.testing.assert_array_equal(a, a2)
    # plain jax.jit(apply) with the key as a traced argument: one trace, fresh masks
    g = jax.jit(model.apply)
    c = np.asarray(g(model.params, X, rng=jax.random.key(2)))
    d = np.asarray(g(model.params, X, rng=jax.random.key(3)))
    assert (c != d).any()
    old_style = np.asarray(g(model.params, X, rng=jax.random.PRNGKey(2)))  # raw uint32 keys work too
    assert set(np.unique(old_style)) == {0.0, 2.0}


def test_model_call_draws_a_fresh_key_per_call_from_its_seed() -> None:
    model = onnxport.import_model(_dropout_model(), backend="jax", seed=7).train()
    first, second = np.asarray(model(X)), np.asarray(model(X))
    assert (first != second).any()
    again = onnxport.import_model(_dropout_model(), backend="jax", seed=7).train()
    np.testing.assert_array_equal(np.asarray(again(X)), first)
    model.seed(7)
    np.testing.assert_array_equal(np.asarray(model(X)), first)


def test_eval_mode_dropout_is_the_identity_and_needs_no_key() -> None:
    model = onnxport.import_model(_dropout_model(), backend="jax")
    assert not model.training
    np.testing.assert_array_equal(np.asarray(model.jit()(model.params, X)), X)
    np.testing.assert_array_equal(np.asarray(jax.jit(model.apply)(model.params, X)), X)
    np.testing.assert_array_equal(np.asarray(model(X)), X)  # the eager call too: identity, not a draw


def test_training_without_a_key_is_refused_naming_the_node() -> None:
    model = onnxport.import_model(_dropout_model(), backend="jax").train()
    with pytest.raises(InputError, match="drop"):
        jax.jit(model.apply)(model.params, X)


def test_seeded_dropout_ignores_the_key() -> None:
    model = onnxport.import_model(_dropout_model(seed=3), backend="jax").train()
    f = model.jit()
    a = np.asarray(f(model.params, X, rng=jax.random.key(0)))
    b = np.asarray(f(model.params, X, rng=jax.random.key(1)))
    assert (a == 0).any()
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(np.asarray(f(model.params, X)), a)  # needs no key at all


def test_random_nodes_draw_independently_and_per_key() -> None:
    nodes = [helper.make_node("RandomNormalLike", ["x"], ["a"], name="first"),
             helper.make_node("RandomNormalLike", ["x"], ["b"], name="second"),
             helper.make_node("RandomNormalLike", ["x"], ["c"], name="seeded", seed=11.0)]
    proto = _model(nodes, [_vi("x", TensorProto.FLOAT, [256])],
                   [_vi(n, TensorProto.FLOAT, [256]) for n in "abc"])
    model = onnxport.import_model(proto, backend="jax")
    f = model.jit()
    x = np.zeros(256, np.float32)
    a0, b0, c0 = (np.asarray(v) for v in f(model.params, x, rng=jax.random.key(0)))
    a1, _, c1 = (np.asarray(v) for v in f(model.params, x, rng=jax.random.key(1)))
    assert (a0 != b0).all()  # two nodes, two subkeys
    assert (a0 != a1).all()  # new key, new draws
    np.testing.assert_array_equal(c0, c1)  # the seed attribute fixes the draws
    assert abs(a0.mean()) < 0.3 and 0.7 < a0.std() < 1.3


# -- train / eval ---------------------------------------------------------------------------------
def _bn_model() -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    rng = np.random.default_rng(0)
    w = {"scale": rng.uniform(0.5, 1.5, 3), "bias": rng.standard_normal(3), "mean": rng.standard_normal(3),
         "var": rng.uniform(0.5, 2.0, 3)}
    w = {k: v.astype(np.float32) for k, v in w.items()}
    nodes = [helper.make_node("BatchNormalization", ["x", "scale", "bias", "mean", "var"], ["y"], name="bn",
                              momentum=0.9, epsilon=1e-5)]
    proto = _model(nodes, [_vi("x", TensorProto.FLOAT, ["N", 3, 4, 4])], [_vi("y", TensorProto.FLOAT, None)],
                   [numpy_helper.from_array(v, k) for k, v in w.items()], opset=15)
    return proto, w


def _per_channel(v: np.ndarray) -> np.ndarray:
    return v.reshape(1, -1, 1, 1)


def test_batchnorm_follows_train_and_eval() -> None:
    proto, w = _bn_model()
    model = onnxport.import_model(proto, backend="jax")
    # the running statistics are state, apart from the trainable params
    assert set(model.params) == {"scale", "bias"} and set(model.state) == {"mean", "var"}
    x = (np.random.default_rng(1).standard_normal((8, 3, 4, 4)) * 3 + 2).astype(np.float32)
    running = (x - _per_channel(w["mean"])) / np.sqrt(_per_channel(w["var"]) + 1e-5)
    eval_ref = running * _per_channel(w["scale"]) + _per_channel(w["bias"])
    bm, bv = x.mean(axis=(0, 2, 3)), x.var(axis=(0, 2, 3))
    batch = (x - _per_channel(bm)) / np.sqrt(_per_channel(bv) + 1e-5)
    train_ref = batch * _per_channel(w["scale"]) + _per_channel(w["bias"])

    f = model.jit()
    np.testing.assert_allclose(np.asarray(f(model.params, x)), eval_ref, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(np.asarray(f(model.params, x, training=True)), train_ref, rtol=1e-4, atol=1e-4)
    model.train()  # the same jitted function follows the model's mode
    np.testing.assert_allclose(np.asarray(f(model.params, x)), train_ref, rtol=1e-4, atol=1e-4)

    # the running statistics: returned by the pure apply, stored by model(...)
    y, updates = f(model.params, x, return_updates=True)
    assert set(updates) == {"mean", "var"}
    np.testing.assert_allclose(np.asarray(updates["mean"]), 0.9 * w["mean"] + 0.1 * bm, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(np.asarray(updates["var"]), 0.9 * w["var"] + 0.1 * bv, rtol=1e-5, atol=1e-5)
    model(x)
    np.testing.assert_allclose(np.asarray(model.state["mean"]), np.asarray(updates["mean"]), rtol=1e-6)
    model.eval()
    _, none = f(model.params, x, return_updates=True)
    assert none == {}


def test_training_flag_must_be_static_under_jit() -> None:
    proto, _ = _bn_model()
    model = onnxport.import_model(proto, backend="jax")
    x = np.ones((2, 3, 4, 4), np.float32)
    with pytest.raises(InputError, match="static"):
        jax.jit(model.apply)(model.params, x, training=True)
    g = jax.jit(model.apply, static_argnames=("training",))
    y = np.asarray(g(model.params, x, training=True))
    np.testing.assert_allclose(y, np.broadcast_to(_per_channel(np.asarray(model.params["bias"])), y.shape),
                               atol=1e-4)  # a constant batch normalizes to the bias


# -- vmap and grad on models ----------------------------------------------------------------------
@pytest.fixture(scope="module")
def squeezenet():
    path = LIGHT / "light_squeezenet.onnx"
    if not path.exists():
        pytest.skip(f"onnx ships no {path.name}")
    model = onnxport.import_model(onnx.load(str(path)), backend="jax")
    # the light model's weights are uniform ConstantOfShape fills (held in model.consts): random
    # ones make the outputs depend on the input
    rng = np.random.default_rng(0)
    consts = {k: jnp.asarray((rng.standard_normal(v.shape) * np.sqrt(2 / np.prod(v.shape[1:]))).astype(np.float32))
              for k, v in model.consts.items()}  # He-scaled, so activations keep their size
    return model, consts


def test_vmap_over_a_light_model(squeezenet) -> None:
    model, consts = squeezenet
    xs = np.random.default_rng(1).uniform(0, 1, (2, 1, 3, 224, 224)).astype(np.float32)

    def one(x):
        return model.apply(model.params, x, consts=consts)

    batched = np.asarray(jax.jit(jax.vmap(one))(xs))
    single = jax.jit(one)
    looped = np.stack([np.asarray(single(x)) for x in xs])
    assert batched.shape == (2, 1, 1000, 1, 1)
    assert np.abs(looped[0] - looped[1]).max() > 1e-6  # different inputs, different outputs
    np.testing.assert_allclose(batched, looped, rtol=1e-4, atol=1e-6)


def test_grad_wrt_inputs_of_a_light_model(squeezenet) -> None:
    model, consts = squeezenet
    rng = np.random.default_rng(2)
    x = jnp.asarray(rng.uniform(0, 1, (1, 3, 224, 224)).astype(np.float32))
    v = jnp.asarray(rng.standard_normal((1, 3, 224, 224)).astype(np.float32))

    def score(x):
        return model.apply(model.params, x, consts=consts)[0, :10].sum() * 100

    g = jax.jit(jax.grad(score))(x)
    assert g.shape == x.shape and bool(jnp.isfinite(g).all()) and float(jnp.abs(g).max()) > 0
    _, forward = jax.jit(lambda x, v: jax.jvp(score, (x,), (v,)))(x, v)
    np.testing.assert_allclose(float(jnp.vdot(g, v)), float(forward), rtol=1e-3)
    eps = 1e-3  # small: fewer ReLU/max kinks crossed
    fd = (float(score(x + eps * v)) - float(score(x - eps * v))) / (2 * eps)
    np.testing.assert_allclose(float(forward), fd, rtol=3e-2, atol=1e-3)


def test_vmap_with_a_static_shape_subgraph() -> None:
    """Shape -> Gather -> Concat -> Reshape sees the per-example shape under vmap."""
    nodes = [
        helper.make_node("Shape", ["x"], ["s"]),
        helper.make_node("Gather", ["s", "zero"], ["n"], axis=0),
        helper.make_node("Concat", ["n", "minus_one"], ["target"], axis=0),
        helper.make_node("Reshape", ["x", "target"], ["flat"]),
        helper.make_node("MatMul", ["flat", "w"], ["y"]),
    ]
    w = np.random.default_rng(3).standard_normal((6, 2)).astype(np.float32)
    inits = [numpy_helper.from_array(np.array([0], np.int64), "zero"),
             numpy_helper.from_array(np.array([-1], np.int64), "minus_one"), numpy_helper.from_array(w, "w")]
    proto = _model(nodes, [_vi("x", TensorProto.FLOAT, ["N", 2, 3])], [_vi("y", TensorProto.FLOAT, None)], inits)
    model = onnxport.import_model(proto, backend="jax")
    xs = np.random.default_rng(4).standard_normal((5, 4, 2, 3)).astype(np.float32)
    ys = jax.jit(jax.vmap(model.apply, in_axes=(None, 0)))(model.params, xs)
    assert ys.shape == (5, 4, 2)
    np.testing.assert_allclose(np.asarray(ys), xs.reshape(5, 4, 6) @ w, rtol=1e-5, atol=1e-5)
    gx = jax.grad(lambda x: model.apply(model.params, x).sum())(jnp.asarray(xs[0]))
    np.testing.assert_allclose(np.asarray(gx), np.broadcast_to(w.sum(1).reshape(2, 3), (4, 2, 3)), rtol=1e-5)


# -- gradients through a Loop with a data-dependent condition ------------------------------------
def _loop_model(trip_count: int | None) -> tuple[onnx.ModelProto, np.ndarray]:
    """y <- y + tanh(y @ w) while sum|y| < 6 (at most ``trip_count`` times when given)."""
    w = (np.random.default_rng(3).standard_normal((4, 4)) * 0.4).astype(np.float32)
    body = helper.make_graph(
        # "mm", not "m": the outer trip count is "m", and a body may not shadow an outer name
        [helper.make_node("MatMul", ["y_in", "w"], ["mm"]), helper.make_node("Tanh", ["mm"], ["t"]),
         helper.make_node("Add", ["y_in", "t"], ["y_out"]), helper.make_node("Abs", ["y_out"], ["a"]),
         helper.make_node("ReduceSum", ["a"], ["s"], keepdims=0), helper.make_node("Less", ["s", "six"], ["c_out"])],
        "body", [_vi("i", TensorProto.INT64, []), _vi("c_in", TensorProto.BOOL, []), _vi("y_in", TensorProto.FLOAT, [2, 4])],
        [_vi("c_out", TensorProto.BOOL, []), _vi("y_out", TensorProto.FLOAT, [2, 4])])
    nodes = [helper.make_node("Abs", ["x"], ["ax"]), helper.make_node("ReduceSum", ["ax"], ["sx"], keepdims=0),
             helper.make_node("Less", ["sx", "six"], ["c0"]),
             helper.make_node("Loop", ["m" if trip_count is not None else "", "c0", "x"], ["y"], body=body)]
    inits = [numpy_helper.from_array(w, "w"), numpy_helper.from_array(np.array(6.0, np.float32), "six")]
    if trip_count is not None:
        inits.append(numpy_helper.from_array(np.array(trip_count, np.int64), "m"))
    return _model(nodes, [_vi("x", TensorProto.FLOAT, [2, 4])], [_vi("y", TensorProto.FLOAT, [2, 4])], inits), w


def _loop_reference(w: np.ndarray, x: np.ndarray, limit: int = 10**6):
    def f(w):
        y, i = x, 0
        while i < limit and bool(jnp.abs(y).sum() < 6.0):
            y, i = y + jnp.tanh(y @ w), i + 1
        return (y ** 2).sum(), i
    return f


def test_grad_through_data_dependent_loop() -> None:
    """Outside jit the loop runs in Python (JAX reverses it); under jit a static trip count gives
    a masked scan (reversible too); without one, lax.while_loop, which JAX cannot reverse."""
    x = (np.random.default_rng(4).standard_normal((2, 4)) * 0.3).astype(np.float32)
    for trip_count in (None, 3):
        proto, w = _loop_model(trip_count)
        model = onnxport.import_model(proto, backend="jax")
        ref = _loop_reference(w, x, 10**6 if trip_count is None else trip_count)
        steps = ref(jnp.asarray(w))[1]
        assert steps >= 2  # the condition stops it, or the trip count does
        want = np.asarray(jax.grad(lambda w: ref(w)[0])(jnp.asarray(w)))

        def loss(p):
            return (model.apply(p, x) ** 2).sum()

        got = jax.grad(loss)(model.params)["w"]
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-4, atol=1e-5)
        if trip_count is not None:
            jitted = jax.jit(jax.grad(loss))(model.params)["w"]
            np.testing.assert_allclose(np.asarray(jitted), want, rtol=1e-4, atol=1e-5)
        else:
            with pytest.raises(ValueError, match="Reverse-mode differentiation does not work for lax.while_loop"):
                jax.jit(jax.grad(loss))(model.params)
            # forward mode still works under jit
            t = jax.jit(lambda p: jax.jvp(loss, (p,), ({"w": jnp.ones_like(p["w"])},))[1])(model.params)
            np.testing.assert_allclose(float(t), float(want.sum()), rtol=1e-3)
