"""onnxport.to_sequential(model, backend="torch"): linear graphs as nn.Sequential."""

from __future__ import annotations

import io
import warnings

import numpy as np
import pytest
import torch
from onnx import helper, numpy_helper
from torch import nn

import onnxport
from onnxport.errors import ModelError

from ..conftest import make_model, tensor_info


def _export(module: nn.Module, x: torch.Tensor, **kw) -> bytes:
    buf = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(module, (x,), buf, dynamo=False, input_names=["x"], output_names=["y"],
                          dynamic_axes={"x": {0: "batch"}}, do_constant_folding=False, **kw)
    return buf.getvalue()


def test_mlp_becomes_native_layers(mlp_model):
    seq = onnxport.to_sequential(mlp_model, backend="torch")
    assert isinstance(seq, nn.Sequential) and len(seq) == 3
    assert isinstance(seq[0], nn.Linear) and isinstance(seq[2], nn.Linear)
    w = {t.name: torch.from_numpy(numpy_helper.to_array(t).copy()) for t in mlp_model.graph.initializer}
    x = torch.randn(5, 4)
    expected = torch.relu(x @ w["fc1.weight"].T + w["fc1.bias"]) @ w["fc2.weight"].T + w["fc2.bias"]
    torch.testing.assert_close(seq(x), expected, rtol=1e-5, atol=1e-5)
    # a step can be swapped like in any nn.Sequential
    seq[2] = nn.Linear(8, 10)
    assert seq(x).shape == (5, 10)


def test_exported_cnn_matches_the_source():
    torch.manual_seed(0)
    src = nn.Sequential(
        nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(8 * 4 * 4, 5),
    ).eval()
    src[1].running_mean.normal_()
    src[1].running_var.uniform_(0.5, 2.0)
    x = torch.randn(2, 3, 8, 8)
    seq = onnxport.to_sequential(_export(src, x))
    assert isinstance(seq[0], nn.Conv2d) and isinstance(seq[-1], nn.Linear)
    with torch.no_grad():
        torch.testing.assert_close(seq(x), src(x), rtol=1e-5, atol=1e-5)
        torch.testing.assert_close(seq(torch.randn(7, 3, 8, 8)).shape, torch.Size([7, 5]))
    # the whole pipeline trains: every step's parameters get gradients
    seq.train()
    seq(x).sum().backward()
    assert all(p.grad is not None for p in seq.parameters())


def test_shared_weight_stays_one_parameter():
    w = numpy_helper.from_array(np.eye(4, dtype=np.float32) * 0.5, "w")
    nodes = [
        helper.make_node("MatMul", ["x", "w"], ["h"], name="mm1"),
        helper.make_node("Relu", ["h"], ["r"], name="relu"),
        helper.make_node("MatMul", ["r", "w"], ["y"], name="mm2"),
    ]
    model = make_model(nodes, [tensor_info("x", [2, 4])], [tensor_info("y", [2, 4])], [w])
    seq = onnxport.to_sequential(model)
    assert len(seq) == 3
    params = list(seq.parameters())  # named_parameters de-duplicates shared tensors
    assert len(params) == 1
    x = torch.randn(2, 4)
    seq(x).sum().backward()
    r = torch.relu(x @ torch.eye(4) * 0.5)
    # d/dW sum(r @ W) + d/dW through the first use
    assert params[0].grad is not None and params[0].grad.abs().sum() > 0
    torch.testing.assert_close(seq(x), r @ (torch.eye(4) * 0.5))


def test_residual_graph_nests_and_other_joins_name_the_node():
    from onnxport_torch.residual import Residual

    nodes = [
        helper.make_node("Relu", ["x"], ["a"], name="relu"),
        helper.make_node("Sigmoid", ["a"], ["b"], name="sig"),
        helper.make_node("Add", ["a", "b"], ["y"], name="residual"),
    ]
    model = make_model(nodes, [tensor_info("x", [2])], [tensor_info("y", [2])])
    seq = onnxport.to_sequential(model)
    assert isinstance(seq[1], Residual) and isinstance(seq[1].shortcut, nn.Identity)
    x = torch.randn(2)
    torch.testing.assert_close(seq(x), torch.relu(x) + torch.sigmoid(torch.relu(x)))
    nodes[2:] = [
        helper.make_node("Tanh", ["a"], ["c"], name="tanh"),
        helper.make_node("Add", ["b", "c"], ["d"], name="inner"),
        helper.make_node("Add", ["d", "a"], ["y"], name="outer"),
    ]
    model = make_model(nodes, [tensor_info("x", [2])], [tensor_info("y", [2])])
    with pytest.raises(ModelError, match="rejoin at 'inner'.*'outer'"):
        onnxport.to_sequential(model)


def test_two_inputs_are_not_sequential():
    model = make_model(
        [helper.make_node("Add", ["x", "z"], ["y"], name="add")],
        [tensor_info("x", [2]), tensor_info("z", [2])],
        [tensor_info("y", [2])],
    )
    with pytest.raises(ModelError, match="one input and one output"):
        onnxport.to_sequential(model)


def test_eval_and_train_switch_dropout_steps():
    rng = np.random.default_rng(0)
    inits = [numpy_helper.from_array(rng.standard_normal((16, 16)).astype(np.float32), "fc.weight"),
             numpy_helper.from_array(np.array(0.5, np.float32), "ratio")]
    nodes = [
        helper.make_node("Gemm", ["x", "fc.weight"], ["h"], name="fc", transB=1),
        helper.make_node("Dropout", ["h", "ratio"], ["y"], name="drop"),
    ]
    seq = onnxport.to_sequential(make_model(nodes, [tensor_info("x", ["n", 16])], [tensor_info("y", ["n", 16])], inits))
    x = torch.randn(64, 16)
    seq.eval()
    # inference: Dropout is the identity, so the output is the Gemm alone (numpy reference)
    expected = x.numpy() @ numpy_helper.to_array(inits[0]).T
    np.testing.assert_allclose(seq(x).detach().numpy(), expected, rtol=1e-5, atol=1e-5)
    seq.train()
    y = seq(x).detach().numpy()
    dropped = y == 0
    assert 0.4 < dropped.mean() < 0.6  # ratio 0.5
    # the kept values are scaled by 1 / (1 - ratio)
    np.testing.assert_allclose(y[~dropped], 2 * expected[~dropped], rtol=1e-5, atol=1e-5)
