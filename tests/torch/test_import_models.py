"""Issue 2 end to end: real models into PyTorch, matching references, trainable, with clear errors."""

from __future__ import annotations

import io

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import helper, numpy_helper

import onnxport
from onnxport.errors import InputError
from onnxport_testkit.light import light_inputs, light_models, light_reference, random_inputs, randomized

from ..conftest import make_model, tensor_info

torch = pytest.importorskip("torch")
nn = torch.nn

LIGHT_MODELS = sorted(light_models())
_light_inputs = light_inputs


def test_all_nine_light_models_are_shipped():
    assert len(LIGHT_MODELS) == 9


#: light models small enough to also import with their shipped weights (all 0.02) and compare with
#: the shipped output: a secondary check; the random-weight comparison above is the one that can
#: fail on numbers (with uniform weights every output is one repeated value)
SHIPPED_CHECK = ["inception_v1", "shufflenet", "squeezenet"]


def _ort_run(proto: onnx.ModelProto, inputs: list[np.ndarray]) -> np.ndarray:
    options = ort.SessionOptions()
    options.log_severity_level = 3
    sess = ort.InferenceSession(proto.SerializeToString(), options, providers=["CPUExecutionProvider"])
    return sess.run(None, dict(zip([i.name for i in sess.get_inputs()], inputs)))[0]


def assert_close_to_reference(ours: np.ndarray, expected: np.ndarray, what: str) -> None:
    """rtol 1e-4 and an atol of 1e-5 of the output's largest magnitude (deep float32 nets)."""
    assert ours.shape == expected.shape and ours.dtype == expected.dtype, (ours.shape, ours.dtype, expected.shape)
    scale = float(np.abs(expected).max())
    # the output must vary, or a wrong op could still match (the shipped weights' failure)
    assert np.std(expected) > 1e-3 * scale, f"{what}: the reference output is nearly constant"
    np.testing.assert_allclose(ours, expected, rtol=1e-4, atol=1e-5 * scale, err_msg=what)


@pytest.mark.parametrize("name", LIGHT_MODELS)
def test_light_model_with_random_weights_matches_onnxruntime(name):
    proto = randomized(onnx.load(str(light_models()[name])))
    inputs = random_inputs(proto)
    model = onnxport.import_model(proto, backend="torch")
    assert isinstance(model, nn.Module)
    with torch.no_grad():
        ours = model(*[torch.from_numpy(x) for x in inputs]).numpy()
    assert_close_to_reference(ours, _ort_run(proto, inputs), name)
    # the native layers are there
    kinds = {type(m) for m in model.modules()}
    assert nn.Conv2d in kinds


@pytest.mark.parametrize("name", SHIPPED_CHECK)
def test_light_model_matches_shipped_reference(name):
    path = light_models()[name]
    model = onnxport.import_model(path, backend="torch")
    inputs = _light_inputs(onnx.load(str(path)))
    with torch.no_grad():
        ours = model(*[torch.from_numpy(x) for x in inputs]).numpy()
    np.testing.assert_allclose(ours, light_reference(path), rtol=1e-4, atol=1e-7)


class _Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv1 = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(c)
        self.conv2 = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(c)

    def forward(self, x):
        y = torch.relu(self.bn1(self.conv1(x)))
        return torch.relu(x + self.bn2(self.conv2(y)))


class SmallResNet(nn.Module):
    def __init__(self, classes=10):
        super().__init__()
        self.stem = nn.Conv2d(3, 8, 3, stride=2, padding=1)
        self.layer1 = nn.Sequential(_Block(8), _Block(8))
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(8, classes)

    def forward(self, x):
        x = self.layer1(torch.relu(self.stem(x)))
        return self.fc(torch.flatten(self.pool(x), 1))


def _randomize_bn(model):
    g = torch.Generator().manual_seed(0)
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.running_mean.copy_(torch.randn(m.num_features, generator=g) * 0.1)
            m.running_var.copy_(torch.rand(m.num_features, generator=g) + 0.5)


def _export(module, args, **kw) -> onnx.ModelProto:
    f = io.BytesIO()
    torch.onnx.export(module, args, f, dynamo=False, **kw)
    return onnx.load_from_string(f.getvalue())


@pytest.fixture(scope="module")
def resnet_onnx():
    torch.manual_seed(0)
    net = SmallResNet().eval()
    _randomize_bn(net)
    proto = _export(net, (torch.randn(2, 3, 32, 32),), input_names=["image"], output_names=["logits"],
                    dynamic_axes={"image": {0: "batch"}, "logits": {0: "batch"}}, opset_version=17)
    return net, proto


def test_hand_built_resnet_matches_torch_and_onnxruntime(resnet_onnx):
    net, proto = resnet_onnx
    model = onnxport.import_model(proto, backend="torch")
    x = torch.randn(5, 3, 32, 32)  # another batch size than the export's
    with torch.no_grad():
        ours = model(x)
        native = net(x)
    np.testing.assert_allclose(ours.numpy(), native.numpy(), rtol=1e-4, atol=1e-4)
    sess = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
    expected = sess.run(None, {"image": x.numpy()})[0]
    assert np.abs(ours.numpy() - expected).max() < 1e-4
    assert any(isinstance(m, nn.Linear) for m in model.modules())


def test_mlp_exported_by_torch_onnx_keeps_names_and_trains():
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 3))
    proto = _export(net, (torch.randn(2, 4),), input_names=["x"], output_names=["y"],
                    dynamic_axes={"x": {0: "n"}, "y": {0: "n"}}, do_constant_folding=False)
    model = onnxport.import_model(proto, backend="torch")
    keys = set(model.state_dict())
    assert {"0.weight", "0.bias", "2.weight", "2.bias"} <= keys
    assert all(isinstance(p, nn.Parameter) for p in model.parameters())
    x = torch.randn(7, 4)
    with torch.no_grad():
        np.testing.assert_allclose(model(x).numpy(), net(x).numpy(), rtol=1e-5, atol=1e-5)


def test_replace_last_layer_and_fine_tune(resnet_onnx):
    _, proto = resnet_onnx
    model = onnxport.import_model(proto, backend="torch")
    heads = [name for name, m in model.named_modules() if isinstance(m, nn.Linear)]
    assert heads, "the final Gemm should import as nn.Linear"
    model.set_submodule(heads[-1], nn.Linear(8, 4))
    model.train()
    torch.manual_seed(1)
    x = torch.randn(16, 3, 32, 32)
    y = torch.randint(0, 4, (16,))
    opt = torch.optim.Adam(model.parameters(), lr=2e-2)
    losses = []
    for _ in range(40):
        loss = nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < 0.5 * losses[0], losses
    assert all(p.grad is not None for p in model.parameters() if p.requires_grad)


def test_shared_initializer_is_one_parameter_and_gradients_add_up():
    w = numpy_helper.from_array(np.ones((3, 3), np.float32), "shared.weight")
    nodes = [
        helper.make_node("MatMul", ["x", "shared.weight"], ["a"], name="mm1"),
        helper.make_node("MatMul", ["a", "shared.weight"], ["y"], name="mm2"),
    ]
    model = onnxport.import_model(make_model(nodes, [tensor_info("x", [1, 3])], [tensor_info("y", [1, 3])], [w]))
    params = list(model.parameters())
    assert len(params) == 1
    x = torch.ones(1, 3)
    model(x).sum().backward()
    # y = x W W  => dy/dW accumulates both uses
    W = torch.ones(3, 3, requires_grad=True)
    (x @ W @ W).sum().backward()
    torch.testing.assert_close(params[0].grad, W.grad)


def test_call_time_input_errors(mlp_model):
    model = onnxport.import_model(mlp_model, backend="torch")
    ok = torch.randn(2, 4)
    assert model(ok).shape == (2, 3)
    assert model(x=ok).shape == (2, 3)
    with pytest.raises(InputError, match="takes 1 input"):
        model(ok, ok)
    with pytest.raises(InputError, match="missing"):
        model()
    with pytest.raises(InputError, match="dtype"):
        model(ok.double())
    with pytest.raises(InputError, match="dimension 1 must be 4"):
        model(torch.randn(2, 5))
    with pytest.raises(InputError, match="rank"):
        model(torch.randn(4))
    with pytest.raises(InputError, match="unknown input"):
        model(z=ok)


def test_outputs_are_a_tuple_in_graph_order():
    nodes = [helper.make_node("Relu", ["x"], ["a"], name="r"), helper.make_node("Neg", ["x"], ["b"], name="n")]
    nodes = nodes[:1] + [helper.make_node("Identity", ["x"], ["b"], name="i")]
    model = onnxport.import_model(make_model(nodes, [tensor_info("x", [2])], [tensor_info("b", [2]), tensor_info("a", [2])]))
    x = torch.tensor([-1.0, 2.0])
    b, a = model(x)
    torch.testing.assert_close(a, torch.relu(x))
    torch.testing.assert_close(b, x)


def test_deepcopy_keeps_weights_and_mode_independent(mlp_model):
    import copy

    model = onnxport.import_model(mlp_model, backend="torch")
    clone = copy.deepcopy(model)
    x = torch.randn(3, 4)
    with torch.no_grad():
        torch.testing.assert_close(model(x), clone(x))
        next(clone.parameters()).add_(1.0)
    assert not torch.equal(model(x), clone(x))
    clone.train()
    assert clone.training and not model.training


def test_pickling_whole_module_gives_a_clear_error(mlp_model):
    model = onnxport.import_model(mlp_model, backend="torch")
    with pytest.raises(onnxport.OnnxportError, match="state_dict"):
        torch.save(model, io.BytesIO())


def test_dropout_exported_in_training_mode_follows_train_eval():
    """An exporter's constant training_mode=True is the export's mode; train()/eval() decide."""
    ratio = numpy_helper.from_array(np.array(0.5, np.float32), "ratio")
    mode = numpy_helper.from_array(np.array(True), "training_mode")
    node = helper.make_node("Dropout", ["x", "ratio", "training_mode"], ["y"], name="drop")
    model = onnxport.import_model(make_model([node], [tensor_info("x", [64, 64])], [tensor_info("y", [64, 64])],
                                             [ratio, mode], opset=22))
    x = torch.ones(64, 64)
    torch.testing.assert_close(model(x), x)  # imported in eval mode
    model.train()
    y = model(x)
    assert (y == 0).any() and torch.allclose(y[y != 0], torch.tensor(2.0))
