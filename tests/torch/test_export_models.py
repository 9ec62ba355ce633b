"""Real models through ``onnxport.export_model``: CNN blocks, transformers, RNNs, names, opsets."""

from __future__ import annotations

import json

import numpy as np
import onnx
import pytest
import torch
from torch import nn
from torch.export import Dim

import onnxport
from onnxport.plugin import spec
from onnxport_torch.exporter import NAME_SCOPES_KEY

from ._export_check import check_model, compare, op_types

torch.manual_seed(0)


class Bottleneck(nn.Module):
    """ResNet bottleneck (conv-bn-relu x3, residual with a projection)."""

    def __init__(self, cin, mid, cout, stride=1):
        super().__init__()
        self.conv1, self.bn1 = nn.Conv2d(cin, mid, 1, bias=False), nn.BatchNorm2d(mid)
        self.conv2, self.bn2 = nn.Conv2d(mid, mid, 3, stride, 1, bias=False), nn.BatchNorm2d(mid)
        self.conv3, self.bn3 = nn.Conv2d(mid, cout, 1, bias=False), nn.BatchNorm2d(cout)
        self.downsample = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        y = self.bn1(self.conv1(x)).relu()
        y = self.bn2(self.conv2(y)).relu()
        return (self.bn3(self.conv3(y)) + self.downsample(x)).relu()


class TinyResNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1, self.bn1 = nn.Conv2d(3, 8, 7, 2, 3, bias=False), nn.BatchNorm2d(8)
        self.maxpool = nn.MaxPool2d(3, 2, 1)
        self.layer1 = nn.Sequential(Bottleneck(8, 4, 16), Bottleneck(16, 4, 16))
        self.layer2 = nn.Sequential(Bottleneck(16, 8, 32, 2))
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(32, 10)

    def forward(self, x):
        x = self.maxpool(self.bn1(self.conv1(x)).relu())
        x = self.avgpool(self.layer2(self.layer1(x)))
        return self.fc(torch.flatten(x, 1))


class MBConv(nn.Module):
    """MobileNetV3/EfficientNet block: expand, depthwise, squeeze-excite, project."""

    def __init__(self, c, e=4):
        super().__init__()
        h = c * e
        self.expand = nn.Sequential(nn.Conv2d(c, h, 1, bias=False), nn.BatchNorm2d(h), nn.Hardswish())
        self.dw = nn.Sequential(nn.Conv2d(h, h, 3, 1, 1, groups=h, bias=False), nn.BatchNorm2d(h), nn.SiLU())
        self.se = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Conv2d(h, 4, 1), nn.ReLU(), nn.Conv2d(4, h, 1), nn.Hardsigmoid())
        self.project = nn.Sequential(nn.Conv2d(h, c, 1, bias=False), nn.BatchNorm2d(c))

    def forward(self, x):
        y = self.dw(self.expand(x))
        return x + self.project(y * self.se(y))


def _randomize_bn(m: nn.Module) -> nn.Module:
    for mod in m.modules():
        if isinstance(mod, nn.BatchNorm2d):
            mod.running_mean.uniform_(-0.5, 0.5)
            mod.running_var.uniform_(0.5, 1.5)
    return m.eval()


def _roundtrip(module, args, **options):
    model = onnxport.export_model(module, args, **options)
    return model, check_model(model)


def test_resnet_block_names_ops_and_dynamic_batch():
    m = _randomize_bn(TinyResNet())
    x = torch.randn(2, 3, 32, 32)
    model, proto = _roundtrip(m, (x,), dynamic_shapes=({0: Dim("batch")},))
    compare(m, proto, (x,))
    compare(m, proto, (torch.randn(5, 3, 32, 32),))
    ops = op_types(model)
    assert {"Conv", "BatchNormalization", "MaxPool", "Gemm", "Relu"} <= ops
    assert proto.graph.input[0].type.tensor_type.shape.dim[0].dim_param == "batch"
    inits = {i.name for i in proto.graph.initializer}
    assert "layer1.0.conv1.weight" in inits and "layer2.0.downsample.1.running_var" in inits
    assert inits <= set(m.state_dict())
    conv = next(n for n in proto.graph.node if n.op_type == "Conv" and "layer1.0.conv1.weight" in n.input)
    assert conv.name.startswith("layer1.0.conv1/")
    meta = {p.key: p.value for p in conv.metadata_props}
    scopes = json.loads(meta[NAME_SCOPES_KEY])
    assert scopes[:4] == ["", "layer1", "layer1.0", "layer1.0.conv1"]


def test_mobilenet_block():
    m = _randomize_bn(nn.Sequential(nn.Conv2d(3, 8, 3, 2, 1), MBConv(8), MBConv(8)))
    x = torch.randn(1, 3, 16, 16)
    model, proto = _roundtrip(m, (x,))
    compare(m, proto, (x,))
    assert {"HardSwish", "HardSigmoid", "Sigmoid", "Conv"} <= op_types(model)


@pytest.mark.parametrize("opset", [13, 18, 23, spec.latest_opset()])
def test_opsets(opset):
    """Newest forms at new opsets, down-adapted forms at old ones; onnxruntime runs up to 23 here."""
    m = nn.Sequential(nn.Linear(8, 16), nn.LayerNorm(16), nn.GELU(), nn.Hardswish()).eval()
    x = torch.randn(3, 4, 8)
    model, proto = _roundtrip(m, (x,), opset=opset)
    assert model.opset_imports[""] == opset
    if opset <= 23:
        compare(m, proto, (x,))
    ops = op_types(model)
    assert ("Gelu" in ops) == (opset >= 20)
    assert ("LayerNormalization" in ops) == (opset >= 17)
    assert ("HardSwish" in ops) == (opset >= 14)
    if opset < 18:
        assert all(n.attributes.get("axes") is not None for n in model.graph if n.op_type == "ReduceMean")


def test_opset_out_of_range():
    with pytest.raises(onnxport.ConversionError, match="opset 12"):
        onnxport.export_model(nn.ReLU(), (torch.randn(2),), opset=12)


def test_tied_weights_and_shared_layer_are_one_initializer():
    class Tied(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(20, 8)
            self.block = nn.Linear(8, 8)
            self.head = nn.Linear(8, 20, bias=False)
            self.head.weight = self.emb.weight

        def forward(self, ids):
            h = self.block(self.block(self.emb(ids)))  # one layer applied twice
            return self.head(h)

    m = Tied().eval()
    ids = torch.randint(0, 20, (2, 5))
    model, proto = _roundtrip(m, (ids,))
    compare(m, proto, (ids,))
    names = [i.name for i in proto.graph.initializer]
    assert sorted(names) == ["block.bias", "block.weight", "emb.weight"]


def test_transformer_encoder_dynamic_batch_and_sequence():
    layer = nn.TransformerEncoderLayer(32, 4, 64, dropout=0.0, batch_first=True)
    m = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False).eval()
    x = torch.randn(2, 7, 32)
    model, proto = _roundtrip(m, (x,), dynamic_shapes=({0: Dim("batch"), 1: Dim("seq")},))
    compare(m, proto, (x,))
    compare(m, proto, (torch.randn(3, 11, 32),))
    assert {"LayerNormalization", "Softmax", "MatMul"} <= op_types(model)


def test_sdpa_attention_op_at_opset_23():
    class Attn(nn.Module):
        def forward(self, q, k, v):
            return nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)

    args = tuple(torch.randn(2, 4, 6, 8) for _ in range(3))
    model, proto = _roundtrip(Attn(), args, opset=23)
    assert "Attention" in op_types(model)
    compare(Attn(), proto, args)


@pytest.mark.parametrize(
    "cell, options, max_nodes",
    [("LSTM", {}, 19), ("GRU", {}, 18), ("RNN", {"nonlinearity": "relu"}, 18),
     ("LSTM", {"bidirectional": True}, 24), ("GRU", {"bidirectional": True, "bias": False}, 18),
     ("LSTM", {"bidirectional": True, "proj_size": 4}, 39)],
)
def test_rnn(cell, options, max_nodes):
    """nn.LSTM/GRU/RNN (2 layers, batch_first): one ONNX LSTM/GRU/RNN node per layer, not the
    unrolled time loop (~530 nodes); the weights' gate reordering is one Gather (or Reshape) per
    weight; the batch (a Dim) stays dynamic."""
    m = getattr(nn, cell)(8, 16, num_layers=2, batch_first=True, **options).eval()
    x = torch.randn(2, 5, 8)
    model, proto = _roundtrip(m, (x,), dynamic_shapes=({0: Dim("batch")},))
    compare(m, proto, (x,))
    compare(m, proto, (torch.randn(7, 5, 8),))
    compare(m, proto, (torch.randn(1, 5, 8),))
    counts: dict[str, int] = {}
    for n in proto.graph.node:
        counts[n.op_type] = counts.get(n.op_type, 0) + 1
    assert counts.pop(cell) == 2, counts
    assert not {"LSTM", "GRU", "RNN", "Loop", "Scan", "Sigmoid", "Tanh"} & set(counts), counts
    assert proto.graph.input[0].type.tensor_type.shape.dim[0].dim_param == "batch"
    # the weights stay the state_dict's initializers (reordered by graph ops, not copied)
    assert {i.name for i in proto.graph.initializer} == set(m.state_dict())
    assert sum(counts.values()) + 2 <= max_nodes, counts


def test_rnn_unsupported():
    """Dropout between layers in training mode and proj_size with a non-zero h0 raise clearly."""
    m = nn.LSTM(8, 16, num_layers=2, dropout=0.5).train()
    with pytest.raises(onnxport.ConversionError, match="dropout=0.5 between layers in training mode"):
        onnxport.export_model(m, (torch.randn(5, 2, 8),))
    m = nn.LSTM(8, 16, proj_size=4).eval()
    state = (torch.randn(1, 2, 4), torch.randn(1, 2, 16))
    with pytest.raises(onnxport.ConversionError, match="proj_size > 0 and a non-zero initial h0"):
        onnxport.export_model(m, (torch.randn(5, 2, 8), state))
    # what the ONNX op cannot express still exports through the core ATen decomposition
    model = onnxport.export_model(m, (torch.randn(5, 2, 8), state), decompose=True)
    compare(lambda x, h, c: m(x, (h, c)), check_model(model), (torch.randn(5, 2, 8), *state))


def _hf(kind: str):
    transformers = pytest.importorskip("transformers")
    if kind == "bert":
        cfg = transformers.BertConfig(vocab_size=100, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                                      intermediate_size=37, max_position_embeddings=64, attn_implementation="sdpa")
        return transformers.BertModel(cfg).eval()
    cfg = transformers.GPT2Config(vocab_size=100, n_embd=32, n_layer=2, n_head=4, n_positions=64, use_cache=False,
                                  bos_token_id=0, eos_token_id=0, attn_implementation="eager")
    return transformers.GPT2LMHeadModel(cfg).eval()


def test_bert_tiny():
    m = _hf("bert")
    ids = torch.randint(0, 100, (2, 8))
    model, proto = _roundtrip(m, (ids,))
    with torch.no_grad():
        ref = m(ids).last_hidden_state.numpy()
    from ._export_check import run_ort

    got = run_ort(proto, (ids,))[0]
    np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-4)
    assert {"LayerNormalization", "Gather", "Gemm"} & op_types(model)
    assert "embeddings.word_embeddings.weight" in {i.name for i in proto.graph.initializer}


def test_gpt2_tiny_tied_head():
    m = _hf("gpt2")
    ids = torch.randint(0, 100, (2, 8))
    model, proto = _roundtrip(m, (ids,))
    from ._export_check import run_ort

    with torch.no_grad():
        ref = m(ids).logits.numpy()
    got = run_ort(proto, (ids,))[0]
    np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-4)
    names = [i.name for i in proto.graph.initializer]
    assert "transformer.wte.weight" in names and "lm_head.weight" not in names  # tied: one initializer


def test_cond_becomes_if():
    class Branchy(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(4, 4)

        def forward(self, x):
            return torch.cond(x.mean() > 0, lambda t: self.lin(t), lambda t: t * 2.0, (x,))

    m = Branchy().eval()
    model, proto = _roundtrip(m, (torch.randn(3, 4),))
    assert "If" in op_types(model)
    compare(m, proto, (torch.randn(3, 4).abs(),))
    compare(m, proto, (-torch.randn(3, 4).abs(),))


def test_unsupported_ops_listed_in_one_error():
    class Bad(nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = nn.Sequential(nn.Linear(4, 4))

        def forward(self, x):
            return torch.atan2(self.inner(x), x).cumprod(0)

    with pytest.raises(onnxport.UnsupportedOpError) as info:
        onnxport.export_model(Bad().eval(), (torch.randn(3, 4),))
    msg = str(info.value)
    assert "aten.atan2" in msg and "aten.cumprod" in msg and "2 op(s)" in msg


def test_save_and_functions_flag(tmp_path):
    m = nn.Sequential(nn.Linear(4, 3)).eval()
    model = onnxport.export_model(m, (torch.randn(2, 4),))
    path = tmp_path / "m.onnx"
    onnxport.save(model, path)
    onnx.checker.check_model(str(path), full_check=True)
    # nothing is called twice: functions=True writes the same plain graph
    with_functions = onnxport.export_model(m, (torch.randn(2, 4),), functions=True)
    assert not with_functions.functions
    assert [n.op_type for n in with_functions.graph] == [n.op_type for n in model.graph]


def _no_bn_conv_model():
    class ConvBn(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(3, 4, 3, padding=1)  # has a bias
            self.bn = nn.BatchNorm2d(4)
            self.shared = nn.Conv2d(4, 4, 1, bias=False)
            self.bn_a, self.bn_b = nn.BatchNorm2d(4), nn.BatchNorm2d(4)
            self.tap = nn.Conv2d(4, 4, 1, bias=False)
            self.bn_tap = nn.BatchNorm2d(4)

        def forward(self, x):
            y = self.bn(self.conv(x))
            y = self.bn_a(self.shared(y)) + self.bn_b(self.shared(y))  # one weight, two folds
            t = self.tap(y)
            return self.bn_tap(t), t  # the Conv output is read twice: not folded

    return _randomize_bn(ConvBn())


@pytest.mark.parametrize("name", ["resnet", "mobilenet", "conv_bn"])
def test_fold_batchnorm(name):
    if name == "resnet":
        m, x = _randomize_bn(TinyResNet()), torch.randn(2, 3, 32, 32)
    elif name == "mobilenet":
        m = _randomize_bn(nn.Sequential(nn.Conv2d(3, 16, 3, 2, 1), MBConv(16), MBConv(16)))
        x = torch.randn(2, 3, 32, 32)
    else:
        m, x = _no_bn_conv_model(), torch.randn(2, 3, 8, 8)
    plain = onnxport.export_model(m, (x,))
    folded = onnxport.export_model(m, (x,), fold_batchnorm=True)
    convs = sum(n.op_type == "Conv" for n in plain.graph)
    bns = sum(n.op_type == "BatchNormalization" for n in plain.graph)
    left = sum(n.op_type == "BatchNormalization" for n in folded.graph)
    assert left == (1 if name == "conv_bn" else 0)
    assert len(list(folded.graph)) == len(list(plain.graph)) - (bns - left)
    assert sum(n.op_type == "Conv" for n in folded.graph) == convs
    assert all(len(n.inputs) == 3 for n in folded.graph if n.op_type == "Conv" and n.outputs[0].uses()[0].node.op_type != "BatchNormalization")
    kept = {"bn_tap.running_mean"} if name == "conv_bn" else set()
    assert {k for k in folded.graph.initializers if "running_mean" in k} == kept
    assert "running_mean" in " ".join(plain.graph.initializers)
    compare(m, check_model(folded), (x,))
    if name == "conv_bn":
        inits = folded.graph.initializers
        assert "conv.weight" in inits and "conv.bias" in inits  # rewritten in place
        assert not torch.equal(torch.from_numpy(inits["conv.weight"].const_value.numpy()), m.conv.weight.detach())
        assert "tap.weight" in inits and "bn_tap.running_mean" in inits
        shared = [n.inputs[1].name for n in folded.graph if n.op_type == "Conv" and n.inputs[1].name.startswith("shared")]
        assert len(set(shared)) == 2  # the shared weight is copied for the first fold


class _LrnNet(nn.Module):
    def __init__(self, size=5):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3)
        self.lrn = nn.LocalResponseNorm(size, alpha=1e-3, beta=0.75, k=2.0)

    def forward(self, x):
        return self.lrn(self.conv(x).relu())


@pytest.mark.parametrize("decompose", [None, True])
def test_local_response_norm_is_one_lrn(decompose):
    """nn.LocalResponseNorm (a module primitive) exports as LRN, not as its traced pad/avg_pool3d/pow/div."""
    m, x = _LrnNet().eval(), torch.randn(2, 3, 8, 8)
    model = onnxport.export_model(m, (x,), dynamic_shapes=({0: Dim("batch")},), decompose=decompose)
    assert sorted(n.op_type for n in model.graph) == ["Conv", "LRN", "Relu"]
    lrn = next(n for n in model.graph if n.op_type == "LRN")
    got = {k: a.value for k, a in lrn.attributes.items()}
    assert got["size"] == 5 and got["beta"] == 0.75 and got["bias"] == 2.0 and got["alpha"] == pytest.approx(1e-3)
    assert json.loads(lrn.metadata_props[NAME_SCOPES_KEY]) == ["", "lrn"]
    proto = check_model(model)
    compare(m, proto, (x,))
    compare(m, proto, (torch.randn(3, 3, 8, 8),))


@pytest.mark.parametrize("shape, ops", [((2, 6, 7), {"Unsqueeze", "LRN", "Squeeze"}),
                                        ((2, 6, 3, 4, 5), {"Reshape", "LRN"})])
def test_local_response_norm_other_ranks_go_through_4d(shape, ops):
    m, x = nn.LocalResponseNorm(3, alpha=0.1, k=1.5).eval(), torch.randn(*shape)
    model = onnxport.export_model(m, (x,))
    assert ops <= op_types(model) and "AveragePool" not in op_types(model)
    compare(m, check_model(model), (x,))


def test_local_response_norm_even_size_exports_its_traced_ops():
    """torch's window of an even size is one channel off ONNX LRN's: the traced ops are exported."""
    m, x = nn.LocalResponseNorm(4, alpha=0.1).eval(), torch.randn(2, 7, 4, 5)
    model = onnxport.export_model(m, (x,))
    assert "LRN" not in op_types(model)
    compare(m, check_model(model), (x,))


def test_local_response_norm_in_repeated_block_function():
    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(4, 4, 3, padding=1)
            self.lrn = nn.LocalResponseNorm(3)

        def forward(self, x):
            return self.lrn(self.conv(x))

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.block = Block()

        def forward(self, x):
            return self.block(self.block(x))

    m, x = Net().eval(), torch.randn(1, 4, 6, 6)
    model = onnxport.export_model(m, (x,), functions=True)
    (fn,) = model.functions.values()
    assert sorted(n.op_type for n in fn if n.op_type != "Constant") == ["Conv", "LRN"]
    compare(m, check_model(model), (x,))


def test_explicit_padding_folds_into_pooling_and_conv():
    """F.pad before max_pool2d / avg_pool2d / conv2d (TF "same" style) is one node with pads."""

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(3, 4, 3, 2)

        def forward(self, x):
            y = torch.nn.functional.max_pool2d(torch.nn.functional.pad(x, (0, 1, 0, 1), value=float("-inf")), 3, 2)
            z = torch.nn.functional.avg_pool2d(torch.nn.functional.pad(x, (1, 1, 0, 2)), 3, 1)
            return y, z, self.conv(torch.nn.functional.pad(x, (0, 1, 1, 0)))

    m, x = Net().eval(), torch.randn(2, 3, 8, 9)
    model = onnxport.export_model(m, (x,))
    assert sorted(n.op_type for n in model.graph) == ["AveragePool", "Conv", "MaxPool"]
    compare(m, check_model(model), (x,))
