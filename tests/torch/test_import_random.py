"""Random ops: no runtime can match another's draws, so check what is defined instead: shapes,
dtypes, seeded repeatability, and the distribution's moments and support on many draws."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper

import onnxport

from ..conftest import make_model, tensor_info

torch = pytest.importorskip("torch")

N = 20000


def _run(node, inputs=(), feeds=(), out_type=TensorProto.FLOAT):
    model = make_model([node], list(inputs), [tensor_info(o, None, out_type) for o in node.output], opset=22)
    imported = onnxport.import_model(model, backend="torch")
    return imported, lambda: imported(*feeds)


def test_random_normal_moments_and_seed():
    node = helper.make_node("RandomNormal", [], ["y"], shape=[N], mean=2.0, scale=0.5, seed=7.0)
    _, call = _run(node)
    a, b = call(), call()
    assert a.dtype == torch.float32 and a.shape == (N,)
    assert torch.equal(a, b)  # a seed fixes the draws
    assert abs(a.mean().item() - 2.0) < 0.02 and abs(a.std().item() - 0.5) < 0.02


def test_random_uniform_like_support_and_unseeded_draws_differ():
    x = torch.zeros(N, dtype=torch.float64)
    node = helper.make_node("RandomUniformLike", ["x"], ["y"], low=-3.0, high=1.0)
    _, call = _run(node, [tensor_info("x", [N], TensorProto.DOUBLE)], [x], out_type=TensorProto.DOUBLE)
    a, b = call(), call()
    assert a.dtype == torch.float64
    assert a.min().item() >= -3.0 and a.max().item() < 1.0
    assert abs(a.mean().item() + 1.0) < 0.05
    assert not torch.equal(a, b)  # without a seed every call draws anew


def test_bernoulli_frequency():
    p = torch.full((N,), 0.3)
    node = helper.make_node("Bernoulli", ["p"], ["y"], seed=1.0)
    _, call = _run(node, [tensor_info("p", [N])], [p])
    y = call()
    assert y.dtype == torch.float32 and set(y.unique().tolist()) <= {0.0, 1.0}
    assert abs(y.mean().item() - 0.3) < 0.02


def test_multinomial_frequencies():
    probs = np.array([0.2, 0.5, 0.3])
    logits = torch.tensor(np.log(probs)[None, :], dtype=torch.float32)
    node = helper.make_node("Multinomial", ["x"], ["y"], sample_size=N, dtype=TensorProto.INT64)
    _, call = _run(node, [tensor_info("x", [1, 3])], [logits], out_type=TensorProto.INT64)
    y = call()
    assert y.shape == (1, N) and y.dtype == torch.int64
    freq = torch.bincount(y[0], minlength=3).double() / N
    assert torch.allclose(freq, torch.tensor(probs), atol=0.02)
