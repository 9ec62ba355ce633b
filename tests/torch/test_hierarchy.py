"""The exporting model's module hierarchy comes back: ``model.layer1[0].conv1`` is an nn.Conv2d."""

from __future__ import annotations

import io
import warnings

import numpy as np
import pytest
import torch
from onnx import helper, numpy_helper
from torch import nn

import onnxport
from onnxport.errors import ConversionError
from onnxport_torch.hierarchy import CLASSES_KEY, SCOPES_KEY, Scope, node_scopes

from ..conftest import make_model, tensor_info


class Block(nn.Module):
    def __init__(self, c: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(c, c, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(c)
        self.relu = nn.ReLU()

    def forward(self, x):
        return self.relu(self.bn1(self.conv1(x))) + x


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.stem = nn.Conv2d(3, 4, 3, padding=1)
        self.layer1 = nn.Sequential(Block(4), Block(4))
        self.fc = nn.Linear(4, 5)

    def forward(self, x):
        x = self.layer1(self.stem(x))
        return self.fc(torch.flatten(nn.functional.adaptive_avg_pool2d(x, 1), 1))


def _net(seed: int) -> Net:
    torch.manual_seed(seed)
    net = Net().eval()
    for m in net.modules():
        if isinstance(m, nn.BatchNorm2d):  # distinct statistics: nothing for the exporter to merge
            m.running_mean.normal_()
            m.running_var.uniform_(0.5, 2.0)
            m.weight.data.normal_()
            m.bias.data.normal_()
    return net


def _export(net: nn.Module, x: torch.Tensor, **kw) -> bytes:
    buf = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(net, (x,), buf, dynamo=False, input_names=["x"], **kw)
    return buf.getvalue()


def _onnxruntime(data: bytes, *inputs: torch.Tensor) -> list[np.ndarray]:
    """The exported model's outputs in onnxruntime: the reference independent of the import."""
    import onnxruntime as ort

    sess = ort.InferenceSession(data, providers=["CPUExecutionProvider"])
    names = [i.name for i in sess.get_inputs()]
    return sess.run(None, {n: t.numpy() for n, t in zip(names, inputs)})


def test_resnet_style_hierarchy_and_state_dict():
    src = _net(0)
    x = torch.randn(2, 3, 8, 8)
    data = _export(src, x, do_constant_folding=False)
    model = onnxport.import_model(data)
    assert isinstance(model.layer1, Scope) and len(model.layer1) == 2
    assert isinstance(model.layer1[0].conv1, nn.Conv2d)
    assert isinstance(model.layer1[-1].bn1, nn.BatchNorm2d)
    assert [type(b) for b in model.layer1] == [Scope, Scope]
    assert isinstance(model.fc, nn.Linear) and isinstance(model.stem, nn.Conv2d)
    assert sorted(model.state_dict()) == sorted(src.state_dict())
    assert model.initializer_keys["layer1.0.conv1.weight"] == "layer1.0.conv1.weight"
    with torch.no_grad():
        np.testing.assert_allclose(model(x).numpy(), _onnxruntime(data, x)[0], rtol=1e-4, atol=1e-5)
        torch.testing.assert_close(model(x), src(x), rtol=1e-5, atol=1e-5)
        # the source model's weights load by key, and the forward follows them
        other = _net(1)
        model.load_state_dict(other.state_dict())
        torch.testing.assert_close(model(x), other(x), rtol=1e-5, atol=1e-5)
    # a replaced layer is used by the forward
    model.layer1[0].conv1 = nn.Conv2d(4, 4, 3, padding=1)
    with torch.no_grad():
        assert not torch.allclose(model(x), other(x))


def test_folded_export_places_layers_by_node_scope():
    src = _net(0)
    x = torch.randn(2, 3, 8, 8)
    data = _export(src, x)
    model = onnxport.import_model(data)  # batch norm folded into anonymous conv weights
    assert isinstance(model.layer1[1].conv1, nn.Conv2d)
    assert not hasattr(model.layer1[1], "bn1")
    keys = model.initializer_keys
    assert all(k.startswith(("stem.", "fc.", "layer1.")) for k in keys.values()), keys
    with torch.no_grad():
        np.testing.assert_allclose(model(x).numpy(), _onnxruntime(data, x)[0], rtol=1e-4, atol=1e-5)
        torch.testing.assert_close(model(x), src(x), rtol=1e-4, atol=1e-4)


def test_dynamo_metadata_scopes_and_classes():
    rng = np.random.default_rng(0)
    w = numpy_helper.from_array(rng.standard_normal((3, 4)).astype(np.float32), "p_anonymous")
    b = numpy_helper.from_array(rng.standard_normal((3,)).astype(np.float32), "b_anonymous")
    gemm = helper.make_node("Gemm", ["x", "p_anonymous", "b_anonymous"], ["y"], name="node_linear", transB=1)
    scopes = ["", "encoder", "encoder.layers.1", "encoder.layers.1.proj", "linear"]
    classes = ["m.Net", "m.Encoder", "m.Layer", "torch.nn.modules.linear.Linear", "aten.linear.default"]
    helper.set_metadata_props(gemm, {SCOPES_KEY: repr(scopes), CLASSES_KEY: repr(classes)})
    model = onnxport.import_model(make_model([gemm], [tensor_info("x", [2, 4])], [tensor_info("y", [2, 3])], [w, b]))
    proj = model.encoder.layers[1].proj
    assert isinstance(proj, nn.Linear)
    assert model.encoder.original_class == "m.Encoder"
    assert model.initializer_keys == {"p_anonymous": "encoder.layers.1.proj.weight",
                                      "b_anonymous": "encoder.layers.1.proj.bias"}
    x = torch.randn(2, 4)
    torch.testing.assert_close(model(x), x @ proj.weight.T + proj.bias)
    # independent of the imported weights: the initializers' own arrays
    want = x.numpy() @ numpy_helper.to_array(w).T + numpy_helper.to_array(b)
    np.testing.assert_allclose(model(x).detach().numpy(), want, rtol=1e-5, atol=1e-6)


def test_anonymous_weight_of_a_function_goes_under_its_users_scope():
    w = numpy_helper.from_array(np.ones((4, 4), np.float32), "onnx::MatMul_7")
    nodes = [helper.make_node("MatMul", ["x", "onnx::MatMul_7"], ["y"], name="/blocks/blocks.0/attn/MatMul")]
    model = onnxport.import_model(make_model(nodes, [tensor_info("x", [2, 4])], [tensor_info("y", [2, 4])], [w]))
    assert model.initializer_keys == {"onnx::MatMul_7": "blocks.0.attn.onnx__MatMul_7"}
    assert isinstance(model.blocks[0].attn.onnx__MatMul_7, nn.Parameter)
    x = torch.randn(2, 4)
    np.testing.assert_allclose(model(x).detach().numpy(), x.numpy() @ np.ones((4, 4), np.float32), rtol=1e-5, atol=1e-6)


def test_scope_is_not_callable_and_option_off():
    src = _net(0)
    data = _export(src, torch.randn(1, 3, 8, 8), do_constant_folding=False)
    model = onnxport.import_model(data)
    with pytest.raises(ConversionError, match="'layer1' is a namespace"):
        model.layer1(torch.randn(1, 4, 8, 8))
    with pytest.raises(IndexError, match="no child 5"):
        model.layer1[5]
    flat = onnxport.import_model(data, hierarchy=False)
    assert not any(isinstance(m, Scope) for m in flat.modules())


def test_node_scopes_parsing():
    assert node_scopes("/layer1/layer1.0/conv1/Conv", None) == [
        ("layer1", None), ("layer1.0", None), ("layer1.0.conv1", None)]
    assert node_scopes("/Flatten", None) == []
    assert node_scopes("plain", None) == []
    meta = {SCOPES_KEY: "['', 'a', 'a.b', 'add']", CLASSES_KEY: "['M', 'A', 'B', 'aten.add']"}
    assert node_scopes("node_add", meta) == [("a", "A"), ("a.b", "B")]
    # metadata is data, never code
    assert node_scopes("x", {SCOPES_KEY: "__import__('os').getcwd()"}) == []
