"""Real architectures, built here with random weights, exported by torch.onnx and imported back.

Each model is exported once per session (cached under a tmp_path_factory folder). The imported
module must match onnxruntime (max abs diff < 1e-4, float32) on the export shapes and on other
batch/sequence sizes, keep the source's module hierarchy where the exporter recorded it, and
fine-tune (the loss falls). A missing op fails the import with onnxport's UnsupportedOpError,
which names every op the model lacks.
"""

from __future__ import annotations

import importlib.util
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import onnxruntime as ort
import pytest
import torch
from torch import nn

import onnxport

pytestmark = pytest.mark.slow

HAS_DYNAMO_EXPORTER = importlib.util.find_spec("onnxscript") is not None


# -- the architectures ----------------------------------------------------------------------------
def _randomize(model: nn.Module) -> nn.Module:
    """Distinct weights and batch-norm statistics, like a trained model's.

    Fresh layers hold equal tensors (zero biases, unit norms) that the exporter would merge.
    """
    g = torch.Generator().manual_seed(1)
    with torch.no_grad():
        for p in model.parameters():
            p.add_(torch.randn(p.shape, generator=g) * 0.02)
    for m in model.modules():
        if isinstance(m, nn.modules.batchnorm._BatchNorm):
            with torch.no_grad():
                m.running_mean.copy_(torch.randn(m.num_features, generator=g) * 0.1)
                m.running_var.copy_(torch.rand(m.num_features, generator=g) + 0.5)
                m.weight.copy_(torch.rand(m.num_features, generator=g) + 0.5)
                m.bias.copy_(torch.randn(m.num_features, generator=g) * 0.1)
    return model


class BasicBlock(nn.Module):
    def __init__(self, cin: int, cout: int, stride: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.downsample = None
        if stride != 1 or cin != cout:
            self.downsample = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        idt = x if self.downsample is None else self.downsample(x)
        return self.relu(self.bn2(self.conv2(self.relu(self.bn1(self.conv1(x))))) + idt)


class ResNet(nn.Module):
    def __init__(self, classes: int = 10) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, 1, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(8)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(3, 2, 1)
        self.layer1 = nn.Sequential(BasicBlock(8, 8, 1), BasicBlock(8, 8, 1))
        self.layer2 = nn.Sequential(BasicBlock(8, 16, 2), BasicBlock(16, 16, 1))
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(16, classes)

    def forward(self, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer2(self.layer1(x))
        return self.fc(torch.flatten(self.avgpool(x), 1))


class SqueezeExcite(nn.Module):
    def __init__(self, c: int, r: int, act: type[nn.Module], gate: type[nn.Module]) -> None:
        super().__init__()
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc1 = nn.Conv2d(c, r, 1)
        self.act = act()
        self.fc2 = nn.Conv2d(r, c, 1)
        self.gate = gate()

    def forward(self, x):
        return x * self.gate(self.fc2(self.act(self.fc1(self.pool(x)))))


class InvertedResidual(nn.Module):
    """MobileNetV3 / EfficientNet MBConv: expand, depthwise, squeeze-excite, project (+ skip)."""

    def __init__(self, cin, cout, expand, k, stride, act, se_act, se_gate) -> None:
        super().__init__()
        mid = cin * expand
        self.expand = nn.Sequential(nn.Conv2d(cin, mid, 1, bias=False), nn.BatchNorm2d(mid), act())
        self.depthwise = nn.Sequential(nn.Conv2d(mid, mid, k, stride, k // 2, groups=mid, bias=False),
                                       nn.BatchNorm2d(mid), act())
        self.se = SqueezeExcite(mid, max(4, mid // 4), se_act, se_gate)
        self.project = nn.Sequential(nn.Conv2d(mid, cout, 1, bias=False), nn.BatchNorm2d(cout))
        self.skip = stride == 1 and cin == cout

    def forward(self, x):
        y = self.project(self.se(self.depthwise(self.expand(x))))
        return x + y if self.skip else y


class MobileNetish(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 8, 3, 2, 1, bias=False), nn.BatchNorm2d(8), nn.Hardswish())
        self.blocks = nn.Sequential(
            InvertedResidual(8, 8, 2, 3, 1, nn.Hardswish, nn.ReLU, nn.Hardsigmoid),
            InvertedResidual(8, 16, 3, 3, 2, nn.Hardswish, nn.ReLU, nn.Hardsigmoid),
        )
        self.head = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(16, 10))

    def forward(self, x):
        return self.head(self.blocks(self.stem(x)))


class EfficientNetish(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 8, 3, 2, 1, bias=False), nn.BatchNorm2d(8), nn.SiLU())
        self.blocks = nn.Sequential(
            InvertedResidual(8, 8, 1, 3, 1, nn.SiLU, nn.SiLU, nn.Sigmoid),
            InvertedResidual(8, 16, 4, 5, 2, nn.SiLU, nn.SiLU, nn.Sigmoid),
        )
        self.head = nn.Sequential(nn.Conv2d(16, 32, 1), nn.SiLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                                  nn.Linear(32, 10))

    def forward(self, x):
        return self.head(self.blocks(self.stem(x)))


class Recurrent(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lstm = nn.LSTM(8, 16, num_layers=2, batch_first=True, bidirectional=True)
        self.gru = nn.GRU(32, 16, batch_first=True)
        self.fc = nn.Linear(16, 3)

    def forward(self, x):
        h, _ = self.lstm(x)
        h, _ = self.gru(h)
        return self.fc(h[:, -1])


class Encoder(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        layer = nn.TransformerEncoderLayer(32, 4, 64, dropout=0.1, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)

    def forward(self, x):
        return self.encoder(x)


class Bert(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        from transformers import BertConfig, BertModel

        cfg = BertConfig(vocab_size=100, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                         intermediate_size=64, max_position_embeddings=64, attn_implementation="eager")
        self.bert = BertModel(cfg)

    def forward(self, input_ids, attention_mask):
        return self.bert(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state


class Gpt2(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        from transformers import GPT2Config, GPT2LMHeadModel

        cfg = GPT2Config(vocab_size=100, n_embd=32, n_layer=2, n_head=4, n_positions=64, use_cache=False,
                         tie_word_embeddings=True, attn_implementation="eager")
        self.gpt = GPT2LMHeadModel(cfg)

    def forward(self, input_ids, attention_mask):
        return self.gpt(input_ids=input_ids, attention_mask=attention_mask, use_cache=False).logits


class ViT(nn.Module):
    """ViT-like: patch embedding, class token, attention scaled by ``head_dim ** -0.5`` of a traced size."""

    def __init__(self, dim: int = 32, heads: int = 4) -> None:
        super().__init__()
        self.heads = heads
        self.patch = nn.Conv2d(3, dim, 4, 4)
        self.cls = nn.Parameter(torch.randn(1, 1, dim) * 0.02)
        self.pos = nn.Parameter(torch.randn(1, 17, dim) * 0.02)
        self.ln = nn.LayerNorm(dim)
        self.qkv, self.proj = nn.Linear(dim, 3 * dim), nn.Linear(dim, dim)
        self.head = nn.Linear(dim, 10)

    def forward(self, x):
        x = self.patch(x).flatten(2).transpose(1, 2)
        x = torch.cat([self.cls.expand(x.shape[0], -1, -1), x], dim=1) + self.pos
        b, n, d = x.shape
        q, k, v = self.qkv(self.ln(x)).reshape(b, n, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        att = torch.softmax(q @ k.transpose(-2, -1) * q.shape[-1] ** -0.5, dim=-1)
        x = x + self.proj((att @ v).transpose(1, 2).reshape(b, n, d))
        return self.head(x[:, 0])


def _image(b: int, s: int = 16) -> tuple[torch.Tensor]:
    return (torch.randn(b, 3, s, s),)


def _tokens(b: int, s: int) -> tuple[torch.Tensor, torch.Tensor]:
    ids = torch.randint(0, 100, (b, s))
    mask = torch.ones(b, s, dtype=torch.long)
    mask[0, -2:] = 0  # some padding
    return ids, mask


@dataclass
class Case:
    build: Callable[[], nn.Module]
    inputs: Callable[..., tuple]  # inputs(*sizes)
    export_sizes: tuple
    other_sizes: tuple
    names: list[str]
    dynamic: dict[str, dict[int, str]]
    export_kwargs: dict[str, Any] = field(default_factory=dict)


_IMG = {"x": {0: "batch"}}
_SEQ = {"x": {0: "batch", 1: "seq"}}
_TOK = {"input_ids": {0: "batch", 1: "seq"}, "attention_mask": {0: "batch", 1: "seq"}}
CASES: dict[str, Case] = {
    # resnet keeps batch norm apart (state_dict of the source loads); the others fold it into convs
    "resnet": Case(ResNet, _image, (2,), (5,), ["x"], _IMG, {"do_constant_folding": False}),
    "mobilenet": Case(MobileNetish, _image, (2,), (3,), ["x"], _IMG),
    "efficientnet": Case(EfficientNetish, _image, (2,), (4,), ["x"], _IMG),
    "lstm_gru": Case(Recurrent, lambda b, s: (torch.randn(b, s, 8),), (2, 5), (3, 9), ["x"], _SEQ),
    "vit": Case(ViT, _image, (2,), (3,), ["x"], _IMG),
    "transformer_encoder": Case(Encoder, lambda b, s: (torch.randn(b, s, 32),), (2, 8), (3, 5), ["x"], _SEQ),
    "bert": Case(Bert, _tokens, (2, 8), (3, 11), ["input_ids", "attention_mask"], _TOK),
    # folding off keeps the tied lm_head reading the embedding table itself
    "gpt2": Case(Gpt2, _tokens, (2, 8), (1, 13), ["input_ids", "attention_mask"], _TOK,
                 {"do_constant_folding": False}),
}
EXPORTERS = ["torchscript", pytest.param("dynamo", marks=pytest.mark.skipif(
    not HAS_DYNAMO_EXPORTER, reason="torch.onnx's dynamo exporter needs onnxscript, which is not installed"))]


class _Exported:
    """Export on first use, once per (model, exporter), into the session's tmp folder."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.cache: dict[tuple[str, str], tuple[nn.Module, Path]] = {}

    def __call__(self, name: str, exporter: str) -> tuple[nn.Module, Path]:
        key = (name, exporter)
        if key not in self.cache:
            case = CASES[name]
            torch.manual_seed(0)
            src = _randomize(case.build()).eval()
            path = self.root / f"{name}_{exporter}.onnx"
            fastpath = torch.backends.mha.get_fastpath_enabled()
            torch.backends.mha.set_fastpath_enabled(False)  # the fused encoder kernel has no ONNX form
            with warnings.catch_warnings(), torch.no_grad():
                warnings.simplefilter("ignore")
                if exporter == "dynamo":
                    shapes = {k: {a: torch.export.Dim.AUTO for a in v} for k, v in case.dynamic.items()}
                    torch.onnx.export(src, case.inputs(*case.export_sizes), path, dynamo=True,
                                      input_names=case.names, dynamic_shapes=shapes)
                else:
                    torch.onnx.export(src, case.inputs(*case.export_sizes), path, dynamo=False,
                                      input_names=case.names, dynamic_axes=case.dynamic, opset_version=17,
                                      **case.export_kwargs)
            torch.backends.mha.set_fastpath_enabled(fastpath)
            self.cache[key] = (src, path)
        return self.cache[key]


@pytest.fixture(scope="session")
def exported(tmp_path_factory) -> _Exported:
    return _Exported(tmp_path_factory.mktemp("real_models"))


def _ort(path: Path, names: list[str], args: tuple) -> np.ndarray:
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    sess = ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])
    return sess.run(None, {n: a.numpy() for n, a in zip(names, args)})[0]


# -- the tests ----------------------------------------------------------------------------------
@pytest.mark.parametrize("exporter", EXPORTERS)
@pytest.mark.parametrize("name", list(CASES))
def test_matches_onnxruntime(exported, name, exporter):
    case = CASES[name]
    src, path = exported(name, exporter)
    model = onnxport.import_model(path)  # UnsupportedOpError here names every missing op
    torch.manual_seed(3)
    for sizes in (case.export_sizes, case.other_sizes):  # dynamic batch / sequence dims
        args = case.inputs(*sizes)
        try:
            ref = _ort(path, case.names, args)
        except Exception as exc:  # noqa: BLE001 - the exporter baked a size into the graph
            assert sizes != case.export_sizes, f"onnxruntime cannot run the exported {name}: {exc}"
            with pytest.raises(onnxport.OnnxportError), torch.no_grad():
                model(*args)  # then ours refuses the same sizes loudly, too
            continue
        with torch.no_grad():
            ours = model(*args)
            want = src(*args)
        assert ours.shape == want.shape
        diff = float(np.abs(ours.numpy() - ref).max())
        assert diff < 1e-4, f"{name} sizes {sizes}: max abs diff vs onnxruntime {diff:.3g}"
        torch.testing.assert_close(ours, want, rtol=1e-4, atol=1e-4)


def test_resnet_hierarchy_and_source_state_dict(exported):
    src, path = exported("resnet", "torchscript")
    model = onnxport.import_model(path)
    assert isinstance(model.layer1[0].conv1, nn.Conv2d)
    assert isinstance(model.layer2[0].downsample[1], nn.BatchNorm2d)
    assert isinstance(model.fc, nn.Linear)
    assert sorted(model.state_dict()) == sorted(src.state_dict())
    other = _randomize(ResNet()).eval()
    model.load_state_dict(other.state_dict())
    x = torch.randn(2, 3, 16, 16)
    with torch.no_grad():
        torch.testing.assert_close(model(x), other(x), rtol=1e-4, atol=1e-4)


def test_transformers_hierarchy_and_tied_embeddings(exported):
    _, bert_path = exported("bert", "torchscript")
    bert = onnxport.import_model(bert_path)
    attn = bert.bert.encoder.layer[1].attention
    assert isinstance(attn.self.query.bias, nn.Parameter)
    assert isinstance(bert.bert.embeddings.word_embeddings, nn.Embedding)
    assert isinstance(bert.bert.embeddings.LayerNorm, nn.Module)
    src, gpt_path = exported("gpt2", "torchscript")
    gpt = onnxport.import_model(gpt_path)
    wte = gpt.gpt.transformer.wte
    assert isinstance(wte, nn.Embedding)
    # tied: the embedding table and the output projection are one Parameter
    tables = [p for p in gpt.parameters() if p.shape == wte.weight.shape]
    assert len(tables) == 1 and tables[0] is wte.weight
    ids, mask = _tokens(2, 8)
    gpt(ids, mask).sum().backward()
    assert wte.weight.grad is not None


@pytest.mark.parametrize("name", ["resnet", "mobilenet", "lstm_gru", "bert"])
def test_fine_tuning_lowers_the_loss(exported, name):
    case = CASES[name]
    _, path = exported(name, "torchscript")
    model = onnxport.import_model(path)
    model.train()
    torch.manual_seed(5)
    args = case.inputs(*case.export_sizes)
    with torch.no_grad():
        target = torch.randn_like(model(*args))
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    losses = []
    for _ in range(12):
        opt.zero_grad()
        loss = nn.functional.mse_loss(model(*args), target)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert all(p.grad is not None for p in model.parameters() if p.requires_grad), "a weight got no gradient"
    assert losses[-1] < 0.7 * losses[0], losses
