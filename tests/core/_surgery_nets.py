"""Small torch models exported to ONNX for the surgery tests (random weights, built here)."""

from __future__ import annotations

import functools
import io
import warnings

import torch
from torch import nn


class Basic(nn.Module):
    def __init__(self, cin: int, cout: int, stride: int = 1):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.down = None
        if stride != 1 or cin != cout:
            self.down = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        y = torch.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        return torch.relu(y + (x if self.down is None else self.down(x)))


class ResNetLike(nn.Module):
    """ResNet-18 layout (2 basic blocks per stage), narrow."""

    def __init__(self, widths=(8, 16, 24, 32), classes: int = 5):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, widths[0], 3, 1, 1, bias=False), nn.BatchNorm2d(widths[0]), nn.ReLU())
        blocks, cin = [], widths[0]
        for i, w in enumerate(widths):
            blocks += [Basic(cin, w, 1 if i == 0 else 2), Basic(w, w)]
            cin = w
        self.blocks = nn.Sequential(*blocks)
        self.fc = nn.Linear(cin, classes)

    def forward(self, x):
        x = self.blocks(self.stem(x))
        return self.fc(torch.flatten(nn.functional.adaptive_avg_pool2d(x, 1), 1))


class InvertedResidual(nn.Module):
    def __init__(self, cin: int, cout: int, stride: int, expand: int):
        super().__init__()
        hidden = cin * expand
        self.use_res = stride == 1 and cin == cout
        self.body = nn.Sequential(
            nn.Conv2d(cin, hidden, 1, bias=False), nn.BatchNorm2d(hidden), nn.ReLU6(),
            nn.Conv2d(hidden, hidden, 3, stride, 1, groups=hidden, bias=False), nn.BatchNorm2d(hidden), nn.ReLU6(),
            nn.Conv2d(hidden, cout, 1, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        return x + self.body(x) if self.use_res else self.body(x)


class MobileNetLike(nn.Module):
    """MobileNetV2 layout: depthwise convolutions, inverted residuals, a linear classifier."""

    def __init__(self, classes: int = 5):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 8, 3, 2, 1, bias=False), nn.BatchNorm2d(8), nn.ReLU6())
        self.blocks = nn.Sequential(InvertedResidual(8, 8, 1, 1), InvertedResidual(8, 12, 2, 4),
                                    InvertedResidual(12, 12, 1, 4), InvertedResidual(12, 16, 2, 4))
        self.head = nn.Sequential(nn.Conv2d(16, 32, 1, bias=False), nn.BatchNorm2d(32), nn.ReLU6())
        self.fc = nn.Linear(32, classes)

    def forward(self, x):
        x = self.head(self.blocks(self.stem(x)))
        return self.fc(x.mean((2, 3)))


class DenseLayer(nn.Module):
    def __init__(self, cin: int, growth: int):
        super().__init__()
        self.bn = nn.BatchNorm2d(cin)
        self.conv = nn.Conv2d(cin, growth, 3, 1, 1, bias=False)

    def forward(self, x):
        return torch.cat([x, self.conv(torch.relu(self.bn(x)))], 1)


class DenseNetLike(nn.Module):
    """DenseNet layout: every layer concatenates its output to its input; a flatten classifier."""

    def __init__(self, classes: int = 5):
        super().__init__()
        self.stem = nn.Conv2d(3, 8, 3, 1, 1)
        self.block = nn.Sequential(DenseLayer(8, 4), DenseLayer(12, 4), DenseLayer(16, 4))
        self.trans = nn.Sequential(nn.BatchNorm2d(20), nn.ReLU(), nn.Conv2d(20, 10, 1), nn.AvgPool2d(2))
        self.fc = nn.Linear(10 * 4 * 4, classes)

    def forward(self, x):
        return self.fc(torch.flatten(self.trans(self.block(self.stem(x))), 1))


class TransformerBlock(nn.Module):
    """Pre-norm attention with an explicit head split, then an MLP."""

    def __init__(self, dim: int = 16, heads: int = 2, head_dim: int = 8, hidden: int = 32, seq: int = 6):
        super().__init__()
        self.heads, self.head_dim, self.seq = heads, head_dim, seq
        self.norm1 = nn.LayerNorm(dim)
        self.q = nn.Linear(dim, heads * head_dim)
        self.k = nn.Linear(dim, heads * head_dim)
        self.v = nn.Linear(dim, heads * head_dim)
        self.o = nn.Linear(heads * head_dim, dim)
        self.norm2 = nn.LayerNorm(dim)
        self.fc1 = nn.Linear(dim, hidden)
        self.fc2 = nn.Linear(hidden, dim)

    def _split(self, t):
        return t.reshape(2, self.seq, self.heads, self.head_dim).transpose(1, 2)

    def forward(self, x):
        h = self.norm1(x)
        q, k, v = self._split(self.q(h)), self._split(self.k(h)), self._split(self.v(h))
        att = torch.softmax(q @ k.transpose(-1, -2) * 0.25, dim=-1)
        ctx = (att @ v).transpose(1, 2).reshape(2, self.seq, self.heads * self.head_dim)
        x = x + self.o(ctx)
        return x + self.fc2(torch.relu(self.fc1(self.norm2(x))))


class DynamicTransformerBlock(TransformerBlock):
    """The same block with batch and sequence read from the input: Reshape targets computed at run time."""

    def _split(self, t):
        return t.reshape(t.shape[0], t.shape[1], self.heads, self.head_dim).transpose(1, 2)

    def forward(self, x):
        h = self.norm1(x)
        q, k, v = self._split(self.q(h)), self._split(self.k(h)), self._split(self.v(h))
        att = torch.softmax(q @ k.transpose(-1, -2) * 0.25, dim=-1)
        ctx = (att @ v).transpose(1, 2).reshape(x.shape[0], x.shape[1], self.heads * self.head_dim)
        x = x + self.o(ctx)
        return x + self.fc2(torch.relu(self.fc1(self.norm2(x))))


def dynamic_transformer() -> bytes:
    """The dynamic block exported with dynamic batch and sequence axes."""
    torch.manual_seed(0)
    return export(DynamicTransformerBlock().eval(), torch.randn(2, 6, 16), dynamic_axes={"x": {0: "b", 1: "s"}})


def randomize(net: nn.Module, seed: int = 0) -> nn.Module:
    """Random batch-norm statistics (so that folding or not matters), eval mode."""
    torch.manual_seed(seed)
    for m in net.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.running_mean.normal_(0, 0.2)
            m.running_var.uniform_(0.5, 2.0)
            m.weight.data.normal_(1, 0.2)
            m.bias.data.normal_(0, 0.2)
    return net.eval()


def export(net: nn.Module, x: torch.Tensor, **kw) -> bytes:
    buf = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(net, (x,), buf, dynamo=False, input_names=["x"], output_names=["y"],
                          opset_version=17, **kw)
    return buf.getvalue()


NETS = {
    "resnet": (ResNetLike, (2, 3, 16, 16)),
    "mobilenet": (MobileNetLike, (2, 3, 16, 16)),
    "densenet": (DenseNetLike, (2, 3, 8, 8)),
    "transformer": (TransformerBlock, (2, 6, 16)),
}


@functools.cache
def onnx_bytes(name: str, fold: bool = True, dynamo: bool = False) -> bytes:
    """``name``'s export: TorchScript (``fold``: constant folding, so batch norms fold) or dynamo."""
    cls, shape = NETS[name]
    torch.manual_seed(0)
    net = randomize(cls())
    if not dynamo:
        return export(net, torch.randn(*shape), do_constant_folding=fold)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        program = torch.onnx.export(net, (torch.randn(*shape),), dynamo=True, input_names=["x"],
                                    output_names=["y"], verbose=False)
    return program.model_proto.SerializeToString()
