"""JAX export pattern fusion: Flax layer norms, GELUs and dense layers become LayerNormalization,
Gelu and Gemm where the opset has them, and compute what JAX computes in onnxruntime (float32:
rtol 1e-4, atol 1e-5; the fused layer norm computes its variance as ``mean((x - m)^2)`` where
Flax writes ``mean(x^2) - m^2``, equal to rounding on these inputs)."""

from __future__ import annotations

import jax
import numpy as np
import onnx
import onnx_ir as ir
import onnxruntime as ort
import pytest

import onnxport

nnx = pytest.importorskip("flax.nnx")

RTOL, ATOL = 1e-4, 1e-5


class Block(nnx.Module):
    def __init__(self, rngs: nnx.Rngs, *, scale: bool = True, bias: bool = True, exact: bool = False):
        self.norm = nnx.LayerNorm(8, use_scale=scale, use_bias=bias, epsilon=1e-5, rngs=rngs)
        self.fc = nnx.Linear(8, 16, rngs=rngs)
        self.exact = exact

    def __call__(self, x):
        return nnx.gelu(self.fc(self.norm(x)), approximate=not self.exact)


def _run(model: ir.Model, *inputs) -> tuple[onnx.ModelProto, list[np.ndarray]]:
    proto = ir.serde.serialize_model(model)
    onnx.checker.check_model(proto, full_check=True)
    sess = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
    return proto, sess.run(None, {i.name: np.asarray(x) for i, x in zip(sess.get_inputs(), inputs)})


def _ops(proto: onnx.ModelProto) -> list[str]:
    return [n.op_type for n in proto.graph.node]


@pytest.mark.parametrize("scale,bias,exact", [(True, True, False), (False, True, True), (True, False, False)])
def test_layer_norm_gelu_fused(scale, bias, exact):
    m = Block(nnx.Rngs(0), scale=scale, bias=bias, exact=exact)
    x = jax.random.normal(jax.random.key(1), (3, 5, 8)) * 3 + 1
    proto, got = _run(onnxport.export_model(m, (x,), opset=20), x)
    ops = _ops(proto)
    assert ops.count("LayerNormalization") == 1 and ops.count("Gelu") == 1, ops
    assert not {"ReduceSum", "ReduceMean", "Sqrt", "Reciprocal", "Tanh", "Erf"} & set(ops), ops
    ln = next(n for n in proto.graph.node if n.op_type == "LayerNormalization")
    assert ln.input[1] == ("norm.scale" if scale else ln.input[1]) and len(ln.input) == (3 if bias else 2)
    np.testing.assert_allclose(got[0], np.asarray(m(x)), rtol=RTOL, atol=ATOL)


def test_fusion_needs_the_opset():
    m = Block(nnx.Rngs(0))
    x = jax.random.normal(jax.random.key(1), (2, 8))
    proto, got = _run(onnxport.export_model(m, (x,), opset=16), x)
    assert not {"LayerNormalization", "Gelu"} & set(_ops(proto))
    np.testing.assert_allclose(got[0], np.asarray(m(x)), rtol=RTOL, atol=ATOL)
    proto, got = _run(onnxport.export_model(m, (x,), opset=18), x)
    assert "LayerNormalization" in _ops(proto) and "Gelu" not in _ops(proto)  # Gelu is opset 20
    assert "Gemm" in _ops(proto)  # a 2-D dense layer
    np.testing.assert_allclose(got[0], np.asarray(m(x)), rtol=RTOL, atol=ATOL)


def test_fuse_false_keeps_the_traced_form():
    m = Block(nnx.Rngs(0))
    x = jax.random.normal(jax.random.key(1), (2, 8))
    proto, got = _run(onnxport.export_model(m, (x,), opset=20, fuse=False), x)
    assert not {"LayerNormalization", "Gelu"} & set(_ops(proto))
    np.testing.assert_allclose(got[0], np.asarray(m(x)), rtol=RTOL, atol=ATOL)


def test_mean_square_form_and_no_false_match():
    """``mean((x - m)^2)`` (the textbook form) fuses; a standardization over a non-trailing axis
    and a variance of another tensor do not."""
    def textbook(x):
        m = x.mean(-1, keepdims=True)
        return (x - m) / jax.numpy.sqrt(((x - m) ** 2).mean(-1, keepdims=True) + 1e-5)

    def leading(x):
        m = x.mean(0, keepdims=True)
        return (x - m) * jax.lax.rsqrt(((x - m) ** 2).mean(0, keepdims=True) + 1e-5)

    def other(x, y):
        m = x.mean(-1, keepdims=True)
        return (x - m) * jax.lax.rsqrt(((y - y.mean(-1, keepdims=True)) ** 2).mean(-1, keepdims=True) + 1e-5)

    x = jax.random.normal(jax.random.key(2), (4, 6))
    y = jax.random.normal(jax.random.key(3), (4, 6))
    proto, got = _run(onnxport.export_model(textbook, (x,)), x)
    assert "LayerNormalization" in _ops(proto), _ops(proto)
    np.testing.assert_allclose(got[0], np.asarray(textbook(x)), rtol=RTOL, atol=ATOL)
    for fn, args in ((leading, (x,)), (other, (x, y))):
        proto, got = _run(onnxport.export_model(fn, args), *args)
        assert "LayerNormalization" not in _ops(proto), fn.__name__
        np.testing.assert_allclose(got[0], np.asarray(fn(*args)), rtol=RTOL, atol=ATOL)


class ConvBN(nnx.Module):
    def __init__(self, rngs: nnx.Rngs, *, scale: bool = True):
        self.conv = nnx.Conv(3, 4, (3, 3), use_bias=False, rngs=rngs)
        self.bn = nnx.BatchNorm(4, use_scale=scale, rngs=rngs)

    def __call__(self, x):
        return nnx.relu(self.bn(self.conv(x)))


@pytest.mark.parametrize("scale", [True, False])
def test_batch_norm_fused(scale):
    m = ConvBN(nnx.Rngs(0), scale=scale)
    m.bn.mean.value = jax.random.normal(jax.random.key(3), (4,))  # statistics that matter
    m.bn.var.value = jax.random.uniform(jax.random.key(4), (4,), minval=0.5, maxval=2.0)
    m.eval()
    x = jax.random.normal(jax.random.key(1), (2, 6, 6, 3))
    proto, got = _run(onnxport.export_model(m, (x,)), x)
    ops = _ops(proto)
    assert ops.count("BatchNormalization") == 1 and not {"Sqrt", "Reciprocal", "Sub"} & set(ops), ops
    bn = next(n for n in proto.graph.node if n.op_type == "BatchNormalization")
    assert list(bn.input[3:]) == ["bn.mean", "bn.var"]
    np.testing.assert_allclose(got[0], np.asarray(m(x)), rtol=RTOL, atol=ATOL)
    proto, got = _run(onnxport.export_model(m, (x,), fold_batchnorm=True), x)  # then folded into Conv
    assert "BatchNormalization" not in _ops(proto)
    np.testing.assert_allclose(got[0], np.asarray(m(x)), rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("axis", [-1, 0, 1])
def test_softmax_fused(axis):
    x = jax.random.normal(jax.random.key(5), (3, 4, 5)) * 4
    fn = lambda x: jax.nn.softmax(x, axis=axis)  # noqa: E731
    proto, got = _run(onnxport.export_model(fn, (x,)), x)
    ops = _ops(proto)
    assert ops == ["Softmax"], ops
    np.testing.assert_allclose(got[0], np.asarray(fn(x)), rtol=RTOL, atol=ATOL)


def test_softmax_shift_that_varies_along_the_axis_is_kept():
    x = jax.random.normal(jax.random.key(5), (3, 4))
    y = jax.random.normal(jax.random.key(6), (3, 4))

    def fn(x, y):
        e = jax.numpy.exp(x - y)  # exp(x - y) / sum: softmax of x - y, not of x
        return e / e.sum(-1, keepdims=True)

    proto, got = _run(onnxport.export_model(fn, (x, y)), x, y)
    assert "Softmax" not in _ops(proto) or proto.graph.node[_ops(proto).index("Softmax")].input[0] != "input_0"
    np.testing.assert_allclose(got[0], np.asarray(fn(x, y)), rtol=RTOL, atol=ATOL)
