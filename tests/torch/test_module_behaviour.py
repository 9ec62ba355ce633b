"""The imported module behaves like a torch module: compile, trace, train/eval, shared weights."""

from __future__ import annotations

import io
import warnings

import numpy as np
import pytest
import torch
from onnx import TensorProto, helper, numpy_helper
from torch import nn

import onnxport

from ..conftest import make_model, tensor_info


class _Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.bn = nn.BatchNorm2d(8)
        self.fc = nn.Linear(8, 4)

    def forward(self, x):
        h = torch.relu(self.bn(self.conv(x)))
        return self.fc(torch.flatten(nn.functional.adaptive_avg_pool2d(h, 1), 1))


@pytest.fixture(scope="module")
def net_and_model():
    torch.manual_seed(0)
    src = _Net().eval()
    src.bn.running_mean.normal_()
    src.bn.running_var.uniform_(0.5, 2.0)
    buf = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(src, (torch.randn(2, 3, 8, 8),), buf, dynamo=False, input_names=["x"],
                          dynamic_axes={"x": {0: "batch"}}, do_constant_folding=False)
    return src, buf.getvalue()


def test_torch_compile(net_and_model):
    src, data = net_and_model
    model = onnxport.import_model(data)
    x = torch.randn(3, 3, 8, 8)
    for backend in ("eager", "aot_eager"):
        torch._dynamo.reset()
        compiled = torch.compile(model, backend=backend, fullgraph=False)
        with torch.no_grad():
            torch.testing.assert_close(compiled(x), src(x), rtol=1e-5, atol=1e-5)
    # gradients flow through the compiled module
    compiled(x).sum().backward()
    assert model.conv.weight.grad is not None


def test_torch_jit_trace(net_and_model):
    src, data = net_and_model
    model = onnxport.import_model(data)
    x = torch.randn(2, 3, 8, 8)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        traced = torch.jit.trace(model, (x,))
    with torch.no_grad():
        torch.testing.assert_close(traced(x), src(x), rtol=1e-5, atol=1e-5)
    buf = io.BytesIO()
    torch.jit.save(traced, buf)
    buf.seek(0)
    loaded = torch.jit.load(buf)
    with torch.no_grad():
        torch.testing.assert_close(loaded(x), src(x), rtol=1e-5, atol=1e-5)


def test_train_and_eval_switch_batch_norm(net_and_model):
    src, data = net_and_model
    model = onnxport.import_model(data)
    assert not model.training and isinstance(model.bn, nn.BatchNorm2d)
    x = torch.randn(4, 3, 8, 8) * 3 + 1
    before = model.bn.running_mean.clone()
    with torch.no_grad():
        y_eval = model(x)
        torch.testing.assert_close(y_eval, src(x), rtol=1e-5, atol=1e-5)
        assert torch.equal(model.bn.running_mean, before)  # eval: statistics untouched
        model.train()
        y_train = model(x)
        torch.testing.assert_close(y_train, src.train()(x), rtol=1e-4, atol=1e-4)
    src.eval()
    assert not torch.allclose(y_train, y_eval)
    assert not torch.equal(model.bn.running_mean, before)  # train: running statistics move
    model.eval()
    with torch.no_grad():
        y_again = model(x)
    assert not torch.allclose(y_again, y_eval)  # evaluated with the updated statistics


def _dropout_model() -> bytes:
    rng = np.random.default_rng(0)
    inits = [numpy_helper.from_array(rng.standard_normal((16, 16)).astype(np.float32), "fc.weight"),
             numpy_helper.from_array(np.array(0.5, np.float32), "ratio")]
    nodes = [helper.make_node("Gemm", ["x", "fc.weight"], ["h"], name="fc", transB=1),
             helper.make_node("Dropout", ["h", "ratio"], ["d"], name="drop"),
             helper.make_node("Relu", ["d"], ["y"], name="relu")]
    return make_model(nodes, [tensor_info("x", ["n", 16])], [tensor_info("y", ["n", 16])], inits).SerializeToString()


def test_train_and_eval_switch_dropout():
    model = onnxport.import_model(_dropout_model())
    x = torch.randn(256, 16)
    with torch.no_grad():
        model.eval()
        a, b = model(x), model(x)
        torch.testing.assert_close(a, b)
        model.train()
        c, d = model(x), model(x)
    assert not torch.equal(c, d)
    zeros_eval = (a == 0).float().mean()
    zeros_train = (c == 0).float().mean()
    assert zeros_train > zeros_eval + 0.2  # about half of the units dropped on top of Relu's zeros


def test_shared_initializer_is_one_parameter_with_summed_gradient():
    w = numpy_helper.from_array(np.random.default_rng(0).standard_normal((4, 4)).astype(np.float32), "w")
    nodes = [helper.make_node("MatMul", ["x", "w"], ["a"], name="mm1"),
             helper.make_node("Tanh", ["a"], ["t"], name="tanh"),
             helper.make_node("MatMul", ["t", "w"], ["b"], name="mm2"),
             helper.make_node("Add", ["b", "w"], ["y"], name="add")]
    model = onnxport.import_model(make_model(nodes, [tensor_info("x", [4, 4])], [tensor_info("y", [4, 4])], [w]))
    params = dict(model.named_parameters())
    assert list(params) == ["w"]
    x = torch.randn(4, 4)
    model(x).sum().backward()
    ref = torch.from_numpy(numpy_helper.to_array(w).copy()).requires_grad_(True)
    (torch.tanh(x @ ref) @ ref + ref).sum().backward()
    torch.testing.assert_close(params["w"].grad, ref.grad)


def test_settings_and_indices_are_buffers_not_parameters():
    rng = np.random.default_rng(0)
    inits = [numpy_helper.from_array(rng.standard_normal((10, 4)).astype(np.float32), "emb.weight"),
             numpy_helper.from_array(np.array(6.0, np.float32), "hi"),
             numpy_helper.from_array(np.array([2, 2, 4], np.int64), "shape")]
    nodes = [helper.make_node("Gather", ["emb.weight", "ids"], ["e"], name="embed"),
             helper.make_node("Clip", ["e", "", "hi"], ["c"], name="clip"),
             helper.make_node("Reshape", ["c", "shape"], ["y"], name="reshape")]
    model = onnxport.import_model(make_model(
        nodes, [tensor_info("ids", [4], TensorProto.INT64)], [tensor_info("y", [2, 2, 4])], inits))
    assert isinstance(model.emb, nn.Embedding)  # Gather on a float table -> nn.Embedding
    assert [k for k, _ in model.named_parameters()] == ["emb.weight"]
    # settings are non-persistent buffers: state_dict() holds the weights only
    assert {"onnx_constants.hi", "onnx_constants.shape"} <= {k for k, _ in model.named_buffers()}
    assert list(model.state_dict()) == ["emb.weight"]
    y = model(torch.tensor([1, -1, 3, 0]))
    assert y.shape == (2, 2, 4)
    y.sum().backward()
    assert model.emb.weight.grad[9].abs().sum() > 0  # index -1 reached the last row
