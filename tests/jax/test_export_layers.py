"""JAX export: Flax NNX layers traced as single onnxport primitives during an export
(:mod:`onnxport_jax.layers`). Each intercepted call exports to exactly the graph numbers of
Flax's own call (onnxruntime outputs bit-identical, no more nodes, the same initializer names),
and matches the Flax module (float32: rtol 1e-5, atol 1e-6, as the attention tests); calls that are
not plainly supported take Flax's own path and still export correctly; nothing is intercepted
outside an export."""

from __future__ import annotations

import threading

import jax
import jax.numpy as jnp
import numpy as np
import onnx
import onnx_ir as ir
import onnxruntime as ort
import pytest
from flax import nnx

import onnxport
from onnxport_jax import layers

RTOL, ATOL = 1e-5, 1e-6
PRIMS = {"linear": "lax.onnxport_nnx_linear", "norm": "lax.onnxport_nnx_layer_norm",
         "attention": "lax.onnxport_nnx_attention", "conv": "lax.onnxport_nnx_conv",
         "batch_norm": "lax.onnxport_nnx_batch_norm"}


def _x(*shape, seed=0):
    return jnp.asarray(np.random.default_rng(seed).standard_normal(shape).astype("float32"))


def _export(obj, args, *, intercept=True, opset=23, **kw):
    saved = layers.enabled
    layers.enabled = intercept
    try:
        model = onnxport.export_model(obj, args, opset=opset, **kw)
    finally:
        layers.enabled = saved
    targets = set(model.meta.get("onnxport.jax.targets", []))
    proto = ir.serde.serialize_model(model)
    onnx.checker.check_model(proto, full_check=True)
    sess = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
    outs = sess.run(None, {i.name: np.asarray(a) for i, a in zip(sess.get_inputs(), args)})
    return proto, outs, targets


def _weights(proto):
    return sorted(i.name for i in proto.graph.initializer if not i.name.startswith("attention_"))


def _same_as_flax_path(obj, args, prim, **kw):
    """The layer primitive was used, and the export equals the one through Flax's own call."""
    new, got, targets = _export(obj, args, **kw)
    old, want, old_targets = _export(obj, args, intercept=False, **kw)
    assert prim in targets and prim not in old_targets
    for a, b in zip(got, want):
        np.testing.assert_array_equal(a, b)
    assert len(new.graph.node) <= len(old.graph.node), ([n.op_type for n in new.graph.node],
                                                         [n.op_type for n in old.graph.node])
    assert _weights(new) == _weights(old)
    np.testing.assert_allclose(got[0], np.asarray(obj(*args)), rtol=RTOL, atol=ATOL)
    return new


def _falls_back(obj, args, prim, **kw):
    """Flax's own call was traced (no layer primitive), and the export computes what Flax does."""
    _, got, targets = _export(obj, args, **kw)
    assert prim not in targets
    np.testing.assert_allclose(got[0], np.asarray(obj(*args)), rtol=RTOL, atol=ATOL)


# -- intercepted: the same export as Flax's own call ----------------------------------------------
@pytest.mark.parametrize("shape,kw", [((3, 4), {}), ((2, 3, 4), {}), ((2, 3, 4), {"use_bias": False}), ((4,), {}),
                                      ((2, 2, 3, 4), {})], ids=["rows", "sequence", "no_bias", "vector", "rank4"])
def test_linear(shape, kw):
    _same_as_flax_path(nnx.Linear(4, 5, rngs=nnx.Rngs(0), **kw), (_x(*shape),), PRIMS["linear"])


def test_linear_symbolic_batch():
    m = nnx.Linear(4, 5, rngs=nnx.Rngs(0))
    proto = _same_as_flax_path(m, (_x(3, 4),), PRIMS["linear"], dynamic_shapes=({0: "batch"},))
    assert [n.op_type for n in proto.graph.node] == ["Gemm"]


@pytest.mark.parametrize("shape,kw", [((2, 3, 6), {}), ((4, 6), {"epsilon": 1e-3}), ((2, 3, 6), {"use_fast_variance": False})],
                         ids=["sequence", "rows_eps", "slow_variance"])
def test_layer_norm(shape, kw):
    _same_as_flax_path(nnx.LayerNorm(6, rngs=nnx.Rngs(0), **kw), (_x(*shape),), PRIMS["norm"])


@pytest.mark.parametrize("features,heads,kw", [(8, 2, {}), (24, 2, {}), (12, 3, {"dropout_rate": 0.1, "deterministic": True}),
                                               (8, 4, {"qkv_features": 16, "out_features": 6})],
                         ids=["self", "depth12", "dropout_off", "qkv_out_features"])
def test_attention(features, heads, kw):
    m = nnx.MultiHeadAttention(heads, features, decode=False, rngs=nnx.Rngs(0), **kw)
    _same_as_flax_path(m, (_x(2, 5, features),), PRIMS["attention"])


def test_attention_cross_and_symbolic_batch():
    m = nnx.MultiHeadAttention(2, 8, decode=False, rngs=nnx.Rngs(0))
    q, kv = _x(2, 4, 8), _x(2, 6, 8, seed=1)
    _same_as_flax_path(m, (q, kv), PRIMS["attention"])
    _same_as_flax_path(m, (q, kv, _x(2, 6, 8, seed=2)), PRIMS["attention"])
    # a symbolic batch: Flax's own call (its traced attention is not fused into Attention there)
    _falls_back(m, (q,), PRIMS["attention"], dynamic_shapes=({0: "batch"},))


def test_layer_norm_symbolic_batch():
    _same_as_flax_path(nnx.LayerNorm(6, rngs=nnx.Rngs(0)), (_x(3, 5, 6),), PRIMS["norm"],
                       dynamic_shapes=({0: "batch", 1: "length"},))


@pytest.mark.parametrize("shape,args,kw", [
    ((2, 8, 8, 3), (3, 4, (3, 3)), {}),
    ((1, 9, 9, 4), (4, 6, (3, 3)), {"strides": 2, "padding": "VALID", "use_bias": False}),
    ((2, 10, 4), (4, 6, (3,)), {"kernel_dilation": 2, "feature_group_count": 2, "padding": ((1, 2),)}),
    ((1, 7, 7, 2), (2, 3, (2, 2)), {"strides": (2, 1), "padding": "SAME"}),
    ((1, 4, 5, 6, 2), (2, 3, (2, 2, 2)), {})], ids=["same", "strided_valid", "grouped_dilated_1d", "same_even", "3d"])
def test_conv(shape, args, kw):
    _same_as_flax_path(nnx.Conv(*args, rngs=nnx.Rngs(0), **kw), (_x(*shape),), PRIMS["conv"])


def _bn(c):
    m = nnx.BatchNorm(c, use_running_average=True, rngs=nnx.Rngs(0))
    m.mean[...] = jnp.linspace(-1.0, 1.0, c)
    m.var[...] = jnp.linspace(0.5, 2.0, c)
    return m


class _ConvBlock(nnx.Module):
    def __init__(self):
        self.conv = nnx.Conv(3, 4, (3, 3), rngs=nnx.Rngs(0))
        self.norm = _bn(4)

    def __call__(self, x):
        return nnx.relu(self.norm(self.conv(x)))


def test_batch_norm_rows():
    _same_as_flax_path(_bn(3), (_x(4, 3),), PRIMS["batch_norm"])


@pytest.mark.parametrize("shape", [(2, 4, 4, 3), (2, 5, 3)], ids=["nhwc", "nwc"])
def test_batch_norm_alone_is_flax(shape):
    # channels-last BatchNorm not after a Conv: the traced arithmetic stays (it is not fused)
    _falls_back(_bn(3), (_x(*shape),), PRIMS["batch_norm"])


def test_conv_batch_norm_block():
    _same_as_flax_path(_ConvBlock(), (_x(2, 6, 6, 3),), PRIMS["batch_norm"])
    _same_as_flax_path(_ConvBlock(), (_x(2, 6, 6, 3),), PRIMS["conv"], dynamic_shapes=({0: "batch"},))


class _Causal(nnx.Module):
    def __init__(self, combine=False):
        self.attn = nnx.MultiHeadAttention(2, 8, decode=False, rngs=nnx.Rngs(0))
        self.combine = combine

    def __call__(self, x):
        mask = nnx.make_causal_mask(x[..., 0])
        if self.combine:  # another mask form: Flax's own call
            mask = nnx.combine_masks(mask, nnx.make_attention_mask(x[..., 0] > -9, x[..., 0] > -9))
        return self.attn(x, mask=mask)


def test_attention_causal_mask_made_in_the_export():
    proto = _same_as_flax_path(_Causal(), (_x(2, 5, 8),), PRIMS["attention"])
    att = [n for n in proto.graph.node if n.op_type == "Attention"]
    assert [a.i for n in att for a in n.attribute if a.name == "is_causal"] == [1]
    _falls_back(_Causal(combine=True), (_x(2, 5, 8),), PRIMS["attention"])


class _Tied(nnx.Module):
    def __init__(self):
        self.fc = nnx.Linear(4, 4, rngs=nnx.Rngs(0))
        self.norm = nnx.LayerNorm(4, rngs=nnx.Rngs(1))

    def __call__(self, x):
        return self.fc(self.norm(self.fc(x)))


def test_shared_layer_is_one_initializer():
    proto = _same_as_flax_path(_Tied(), (_x(2, 3, 4),), PRIMS["linear"])
    assert _weights(proto) == ["fc.bias", "fc.kernel", "norm.bias", "norm.scale"]


# -- not plainly supported: Flax's own call ---------------------------------------------------------
def test_fallbacks_export_correctly():
    x = _x(2, 3, 4)
    _falls_back(nnx.Linear(4, 5, dtype=jnp.float16, rngs=nnx.Rngs(0)), (x,), PRIMS["linear"])
    _falls_back(nnx.Linear(4, 5, precision=jax.lax.Precision.HIGHEST, rngs=nnx.Rngs(0)), (x,), PRIMS["linear"])
    _falls_back(nnx.LayerNorm(4, use_bias=False, rngs=nnx.Rngs(0)), (x,), PRIMS["norm"])
    _falls_back(nnx.LayerNorm(4, rngs=nnx.Rngs(0)), (x,), PRIMS["norm"], opset=16)  # no LayerNormalization
    mha = nnx.MultiHeadAttention(2, 4, decode=False, rngs=nnx.Rngs(0))
    _falls_back(mha, (x,), PRIMS["attention"], opset=21)  # no Attention op
    causal = nnx.make_causal_mask(x[..., 0])
    _falls_back(lambda a: mha(a, mask=causal), (x,), PRIMS["attention"])
    # under vmap the inputs are batch tracers: Flax's call, batched by JAX
    lin = nnx.Linear(4, 5, rngs=nnx.Rngs(0))
    _falls_back(lambda a: jax.vmap(lin)(a), (x,), PRIMS["linear"])
    _falls_back(nnx.Conv(4, 5, (3,), padding="CIRCULAR", rngs=nnx.Rngs(0)), (x,), PRIMS["conv"])
    _falls_back(nnx.Conv(4, 5, (2,), input_dilation=2, padding=((1, 1),), rngs=nnx.Rngs(0)), (x,), PRIMS["conv"])
    _falls_back(nnx.Conv(4, 5, (3,), padding="CAUSAL", rngs=nnx.Rngs(0)), (x,), PRIMS["conv"])
    _falls_back(nnx.BatchNorm(4, use_running_average=True, use_scale=False, rngs=nnx.Rngs(0)), (x,),
                PRIMS["batch_norm"])
    # functions=True keeps Flax's own calls (their nested jit calls become functions)
    _falls_back(nnx.LayerNorm(4, rngs=nnx.Rngs(0)), (x,), PRIMS["norm"], functions=True)
    # fuse=False / optimize=False keep the traced form of every layer
    _falls_back(nnx.LayerNorm(4, rngs=nnx.Rngs(0)), (x,), PRIMS["norm"], fuse=False)
    _falls_back(mha, (x,), PRIMS["attention"], optimize=False)


def test_batch_statistics_are_not_intercepted():
    bn = nnx.BatchNorm(4, use_running_average=False, rngs=nnx.Rngs(0))
    x = _x(3, 4)
    _, got, targets = _export(nnx.BatchNorm(4, use_running_average=False, rngs=nnx.Rngs(0)), (x,))
    assert PRIMS["batch_norm"] not in targets
    np.testing.assert_allclose(got[0], np.asarray(bn(x)), rtol=RTOL, atol=1e-5)


def test_active_dropout_is_not_intercepted():
    mha = nnx.MultiHeadAttention(2, 4, dropout_rate=0.5, deterministic=False, decode=False, rngs=nnx.Rngs(0))
    with pytest.raises(onnxport.OnnxportError):  # random dropout is refused, as without interception
        _export(mha, (_x(2, 3, 4),))


# -- nothing intercepted outside an export ---------------------------------------------------------
def _prims(jaxpr) -> set[str]:
    out = set()
    for eqn in jaxpr.eqns:
        out.add(eqn.primitive.name)
        for sub in jax.extend.core.jaxprs_in_params(eqn.params):
            out |= _prims(sub)
    return out


def test_nothing_intercepted_outside_export():
    own = {c: c.__dict__["__call__"] for c in (nnx.Linear, nnx.LayerNorm, nnx.MultiHeadAttention, nnx.Conv,
                                                 nnx.BatchNorm)}
    mha = nnx.MultiHeadAttention(2, 8, decode=False, rngs=nnx.Rngs(0))
    x = _x(2, 5, 8)
    _export(mha, (x,))
    with pytest.raises(onnxport.OnnxportError):  # a failing trace restores the classes too
        onnxport.export_model(lambda a: mha(a)[0, 0, 0].item(), (x,), opset=23)
    assert {c: c.__dict__["__call__"] for c in own} == own
    assert not hasattr(nnx.make_causal_mask, "__wrapped__")
    names = _prims(jax.make_jaxpr(lambda a: mha(a))(x).jaxpr)
    assert not any(n.startswith("onnxport") for n in names), names
    np.testing.assert_array_equal(np.asarray(mha(x)), np.asarray(jax.jit(lambda a: mha(a))(x)))


def test_other_threads_are_not_intercepted():
    lin = nnx.Linear(4, 5, rngs=nnx.Rngs(0))
    seen: list[set[str]] = []
    started, release = threading.Event(), threading.Event()

    def other():
        started.wait(30)
        seen.append(_prims(jax.make_jaxpr(lambda a: lin(a))(_x(3, 4)).jaxpr))
        release.set()

    def slow(a):  # traced by the export while the other thread traces the same layer
        started.set()
        release.wait(30)
        return lin(a)

    t = threading.Thread(target=other)
    t.start()
    _, _, targets = _export(slow, (_x(3, 4),))
    t.join(30)
    assert PRIMS["linear"] in targets
    assert seen and not any(n.startswith("onnxport") for n in seen[0]), seen
