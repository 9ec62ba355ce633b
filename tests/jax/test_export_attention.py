"""JAX export: scaled dot-product attention becomes one ONNX ``Attention`` node at opset 23+
(:mod:`onnxport.exporting.fusions.patterns_attention`), in the forms Flax's ``nnx.MultiHeadAttention``,
``jax.nn.dot_product_attention`` and hand-written ``jnp`` attention trace to, and computes what JAX
computes in onnxruntime (float32: rtol 1e-5, atol 1e-6; measured differences are below 6e-7,
the scale being applied once to Q·Kᵀ instead of to Q). Below opset 23, and for look-alike graphs
whose numbers would change, the traced form stays."""

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
_K = jax.random.key


def _export(fn, args, opset=23, **kw) -> tuple[onnx.ModelProto, np.ndarray]:
    proto = ir.serde.serialize_model(onnxport.export_model(fn, args, opset=opset, **kw))
    onnx.checker.check_model(proto, full_check=True)
    sess = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
    got = sess.run(None, {i.name: np.asarray(a) for i, a in zip(sess.get_inputs(), args)})
    ref = fn(*args)
    np.testing.assert_allclose(got[0], np.asarray(ref[0] if isinstance(ref, tuple) else ref), rtol=RTOL, atol=ATOL)
    return proto, got


def _ops(proto: onnx.ModelProto) -> list[str]:
    return [n.op_type for n in proto.graph.node]


def _attention(proto: onnx.ModelProto) -> onnx.NodeProto:
    nodes = [n for n in proto.graph.node if n.op_type == "Attention"]
    assert len(nodes) == 1, _ops(proto)
    assert not {"Softmax", "Exp", "ReduceSum"} & set(_ops(proto)), _ops(proto)
    return nodes[0]


def _attr(node: onnx.NodeProto, name: str):
    return next((onnx.helper.get_attribute_value(a) for a in node.attribute if a.name == name), None)


_BTHD = (2, 5, 4, 8)  # Flax's layout: batch, sequence, heads, features
Q = jax.random.normal(_K(0), _BTHD)
KV = jax.random.normal(_K(1), (2, 6, 4, 8))


def _bhsd(x):
    return jnp.swapaxes(x, 1, 2)


def _hand(q, k, v):
    s = q @ jnp.swapaxes(k, -1, -2) / jnp.sqrt(q.shape[-1])
    return jax.nn.softmax(s, axis=-1) @ v


def _hand_causal(q, k, v):
    s = q @ jnp.swapaxes(k, -1, -2) * q.shape[-1] ** -0.5
    n = q.shape[-2]
    s = jnp.where(jnp.tril(jnp.ones((n, n), bool)), s, -jnp.inf)
    return jax.nn.softmax(s, axis=-1) @ v


def test_hand_written_is_one_node():
    """The (batch, heads, seq, dim) form the Attention op takes: nothing around the node."""
    q, k = _bhsd(Q), _bhsd(KV)
    proto, _ = _export(_hand, (q, k, k))
    assert _ops(proto) == ["Attention"]
    node = _attention(proto)
    assert _attr(node, "scale") == pytest.approx(8 ** -0.5) and not _attr(node, "is_causal")
    proto, _ = _export(_hand_causal, (q, q, q))
    assert _ops(proto) == ["Attention"] and _attr(_attention(proto), "is_causal") == 1


@pytest.mark.parametrize("shape", [(5, 8), (3, 5, 8)])
def test_hand_written_without_heads(shape):
    """No batch or heads axes: they are size-1 axes of the 4-D node."""
    q = jax.random.normal(_K(2), shape)
    proto, _ = _export(_hand, (q, q * 0.5, q + 1))
    _attention(proto)


def test_jax_nn_forms():
    f = lambda q, k: jax.nn.dot_product_attention(q, k, k)  # noqa: E731
    _attention(_export(f, (Q, KV))[0])
    f = lambda q: jax.nn.dot_product_attention(q, q, q, is_causal=True)  # noqa: E731
    assert _attr(_attention(_export(f, (Q,))[0]), "is_causal") == 1
    bias = jax.random.normal(_K(3), (1, 4, 5, 6))
    f = lambda q, k, b: jax.nn.dot_product_attention(q, k, k, bias=b, scale=0.3)  # noqa: E731
    node = _attention(_export(f, (Q, KV, bias))[0])
    assert _attr(node, "scale") == pytest.approx(0.3) and len(node.input) == 4


def test_grouped_query_heads():
    """Four query heads over two key/value heads: each head group joins the query sequence."""
    kv = jax.random.normal(_K(4), (2, 6, 2, 8))
    f = lambda q, k: jax.nn.dot_product_attention(q, k, k)  # noqa: E731
    _attention(_export(f, (Q, kv))[0])


def test_computed_mask_with_fully_masked_rows():
    """A padding mask masks whole query rows: JAX averages V there (finite fill), and so does
    the additive float mask the rewrite passes (a boolean mask would give zeros)."""
    mask = np.ones((2, 1, 5, 6), bool)
    mask[0, :, 3:, :] = False
    mask[1, :, :, 4:] = False
    f = lambda q, k, m: jax.nn.dot_product_attention(q, k, k, mask=m)  # noqa: E731
    proto, got = _export(f, (Q, KV, jnp.asarray(mask)))
    _attention(proto)
    assert np.isfinite(got[0]).all()


class _MHA(nnx.Module):
    def __init__(self, rngs, **kw):
        self.attn = nnx.MultiHeadAttention(num_heads=4, in_features=16, qkv_features=16, decode=False, rngs=rngs, **kw)

    def __call__(self, x, pad=None):
        mask = nnx.make_causal_mask(jnp.ones(x.shape[:2])) if pad is None else nnx.make_attention_mask(pad, pad)
        return self.attn(x, mask=mask)


@pytest.mark.parametrize("flax_path", [False, True], ids=["jax_nn", "flax_weights"])
def test_flax_multi_head_attention(flax_path):
    """Both of Flax's paths (``jax.nn.dot_product_attention``, and its own einsums once a dropout
    rate is set), with a causal mask and with a padding mask."""
    m = _MHA(nnx.Rngs(0), **({"dropout_rate": 0.1, "deterministic": True} if flax_path else {}))
    x = jax.random.normal(_K(5), (2, 5, 16))
    # a closure: the dropout's PRNG key state is then a constant (a module export refuses keys)
    proto, _ = _export(lambda x: m(x), (x,))
    assert _attr(_attention(proto), "is_causal") == 1
    pad = jnp.asarray([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]], bool)
    proto, _ = _export(lambda x, p: m(x, p), (x, pad))
    assert len(_attention(proto).input) == 4
    plain = nnx.MultiHeadAttention(num_heads=4, in_features=16, decode=False, rngs=nnx.Rngs(1))
    _attention(_export(plain, (x,))[0])


def test_needs_opset_23():
    q, k = _bhsd(Q), _bhsd(KV)
    for fn, args in ((_hand, (q, k, k)), (_hand_causal, (q, q, q)), (_MHA(nnx.Rngs(0)), (jax.random.normal(_K(5), (2, 5, 16)),))):
        proto, _ = _export(fn, args, opset=22)
        assert "Attention" not in _ops(proto) and "Softmax" in _ops(proto)
        proto, _ = _export(fn, args, opset=23, fuse=False)
        assert "Attention" not in _ops(proto)


def _softmax_over_queries(q, k, v):
    s = q @ jnp.swapaxes(k, -1, -2) / jnp.sqrt(q.shape[-1])
    return jax.nn.softmax(s, axis=-2) @ v  # normalised over the queries, summed over the keys


def _per_head_scale(q, k, v):
    s = q @ jnp.swapaxes(k, -1, -2) * jnp.asarray([0.1, 0.2, 0.3, 0.4])[:, None, None]
    return jax.nn.softmax(s, axis=-1) @ v


def _scale_after_mask(q, k, v):
    s = q @ jnp.swapaxes(k, -1, -2)
    s = jnp.where(jnp.tril(jnp.ones((5, 5), bool)), s, -1e30) * 0.3
    return jax.nn.softmax(s, axis=-1) @ v


def _small_fill(q, k, v):
    s = q @ jnp.swapaxes(k, -1, -2)
    return jax.nn.softmax(jnp.where(jnp.tril(jnp.ones((5, 5), bool)), s, -5.0), axis=-1) @ v


def _computed_inf_mask(q, k, v):
    s = q @ jnp.swapaxes(k, -1, -2)
    return jax.nn.softmax(jnp.where(q[..., :1] > 0, s, -jnp.inf), axis=-1) @ v  # rows may be all -inf


def _weights_returned(q, k, v):
    w = jax.nn.softmax(q @ jnp.swapaxes(k, -1, -2), axis=-1)
    return w @ v, w


def _summed_heads(q, k, v):
    w = jax.nn.softmax(q @ jnp.swapaxes(k, -1, -2), axis=-1)
    return jnp.einsum("bhqk,bhkd->bqd", w, v)


@pytest.mark.parametrize("fn", [_softmax_over_queries, _per_head_scale, _scale_after_mask, _small_fill,
                                _computed_inf_mask, _weights_returned, _summed_heads],
                         ids=lambda f: f.__name__.strip("_"))
def test_look_alikes_are_kept(fn):
    """Graphs that are not attention (softmax over the query axis, a product summing the heads),
    or whose numbers the Attention op would change (a per-head scale, a scale applied after the
    mask, a fill that leaves masked weights non-zero, a computed -inf mask that can mask a whole
    row, attention weights that are an output too), keep their traced form, still correct."""
    q = _bhsd(Q)
    proto, _ = _export(fn, (q, q * 0.7, q + 0.5))
    assert "Attention" not in _ops(proto), _ops(proto)


def _ln_attention(x):
    m = x.mean(-1, keepdims=True)
    x = (x - m) * jax.lax.rsqrt(((x - m) ** 2).mean(-1, keepdims=True) + 1e-5)
    return _hand(x, x, x)


def _cond(p, x):
    return jax.lax.cond(p > 0, _ln_attention, lambda x: x * 2.0, x)


def _scan(xs):
    return jax.lax.scan(lambda c, x: (c + 1.0, _ln_attention(x + c)), jnp.zeros(xs.shape[1:]), xs)[1]


_block = jax.jit(_ln_attention)


def _functions(x):
    return _block(_block(x) + 1.0)


def _all_ops(graph: onnx.GraphProto) -> list[str]:
    out = []
    for n in graph.node:
        out.append(n.op_type)
        for a in n.attribute:
            if a.type == onnx.AttributeProto.GRAPH:
                out += _all_ops(a.g)
    return out


@pytest.mark.parametrize("fn,args,kw", [
    (_cond, (jnp.float32(1.0), Q), {}),
    (_scan, (Q,), {}),
    (_functions, (Q,), {"functions": True}),
], ids=["if_branch", "loop_body", "local_function"])
def test_rewrites_in_subgraphs_and_functions(fn, args, kw):
    """The rewrites run in If branches, Loop bodies (a scan) and model-local functions too."""
    proto, _ = _export(fn, args, **kw)
    if kw:
        assert {f.name for f in proto.functions} and "Attention" not in _ops(proto)
        inner = [n.op_type for f in proto.functions for n in f.node]
    else:
        assert "Attention" not in _ops(proto)
        inner = _all_ops(proto.graph)
    assert inner.count("Attention") == 1 and inner.count("LayerNormalization") == 1, inner
    assert not {"Softmax", "ReduceMean", "Sqrt"} & set(inner), inner


def test_round_trip_through_the_importer():
    """The fused node (here the 3-D form with ``q_num_heads`` Flax's layout takes, is_causal)
    imports back into JAX with the same outputs."""
    m = _MHA(nnx.Rngs(0))
    x = jax.random.normal(_K(5), (2, 5, 16))
    proto, _ = _export(m, (x,))
    node = _attention(proto)
    assert _attr(node, "q_num_heads") == 4 and _attr(node, "is_causal") == 1
    assert "Transpose" not in _ops(proto), _ops(proto)  # Reshapes to and from Flax's layout
    back = onnxport.import_model(proto, backend="jax")
    np.testing.assert_allclose(np.asarray(back(x)), np.asarray(m(x)), rtol=RTOL, atol=ATOL)
