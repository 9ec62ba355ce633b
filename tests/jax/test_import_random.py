"""Random ops in JAX: no runtime can match another's draws, so check what is defined instead:
shapes, dtypes, seeded repeatability, and the distribution's moments and support on many draws
(the node cases of Bernoulli are expected failures: their values are numpy's draws)."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper

import onnxport

pytest.importorskip("jax")

N = 20000


def tensor_info(name, shape, dtype=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, dtype, shape)


def _model(node, inputs=()):
    graph = helper.make_graph([node], "g", list(inputs), [tensor_info(o, None) for o in node.output])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 22)])
    model.ir_version = 10
    return onnxport.import_model(model, backend="jax", seed=0)


def test_random_normal_moments_and_seed():
    model = _model(helper.make_node("RandomNormal", [], ["y"], shape=[N], mean=2.0, scale=0.5, seed=7.0))
    a, b = np.asarray(model()), np.asarray(model())
    assert a.dtype == np.float32 and a.shape == (N,)
    np.testing.assert_array_equal(a, b)  # a seed fixes the draws
    assert abs(a.mean() - 2.0) < 0.02 and abs(a.std() - 0.5) < 0.02


def test_random_uniform_like_support_and_unseeded_draws_differ():
    model = _model(helper.make_node("RandomUniformLike", ["x"], ["y"], low=-3.0, high=1.0),
                   [tensor_info("x", [N])])
    x = np.zeros(N, np.float32)
    a, b = np.asarray(model(x)), np.asarray(model(x))
    assert a.dtype == np.float32 and a.shape == (N,)
    assert a.min() >= -3.0 and a.max() < 1.0
    assert abs(a.mean() + 1.0) < 0.05 and abs(a.std() - 4 / np.sqrt(12)) < 0.05
    assert (a != b).any()  # without a seed every call draws anew


def test_bernoulli_frequency():
    model = _model(helper.make_node("Bernoulli", ["p"], ["y"], seed=1.0), [tensor_info("p", [N])])
    y = np.asarray(model(np.full(N, 0.3, np.float32)))
    assert y.dtype == np.float32 and set(np.unique(y).tolist()) <= {0.0, 1.0}
    assert abs(y.mean() - 0.3) < 0.02


def test_multinomial_frequencies():
    probs = np.array([0.2, 0.5, 0.3])
    node = helper.make_node("Multinomial", ["x"], ["y"], sample_size=N, dtype=TensorProto.INT32)
    graph = helper.make_graph([node], "g", [tensor_info("x", [1, 3])], [tensor_info("y", None, TensorProto.INT32)])
    proto = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 22)])
    proto.ir_version = 10
    model = onnxport.import_model(proto, backend="jax", seed=0)
    y = np.asarray(model(np.log(probs)[None, :].astype(np.float32)))
    assert y.shape == (1, N) and y.dtype == np.int32
    freq = np.bincount(y[0], minlength=3) / N
    np.testing.assert_allclose(freq, probs, atol=0.02)
