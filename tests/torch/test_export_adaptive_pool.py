"""Adaptive pooling exports as pooling, however the program reaches the exporter.

A global or evenly dividing adaptive pool is one ONNX pooling op (GlobalAveragePool/GlobalMaxPool,
AveragePool/MaxPool with kernel = stride = in / out); windows of unequal sizes are averaging
MatMuls (average) or a Gather of the windows and a ReduceMax (max). This holds when the traced
program is exported as it is and when it is decomposed to core ATen first (an in-place op forces
that), where torch would write a global average pool of a channels-last input as a mean plus an
``as_strided`` that restores the memory format. Every export runs in onnxruntime against torch.
"""

from __future__ import annotations

import pytest
import torch
from torch import nn

import onnxport
from onnxport.errors import ConversionError
from tests.torch._export_check import check_model, compare, op_types

torch.manual_seed(0)

#: (pool, input shape, the op the pooling must be)
POOLS = [
    (nn.AdaptiveAvgPool1d(1), (2, 4, 9), {"GlobalAveragePool"}),
    (nn.AdaptiveAvgPool1d(3), (2, 4, 9), {"AveragePool"}),
    (nn.AdaptiveAvgPool1d(4), (2, 4, 9), {"MatMul"}),
    (nn.AdaptiveMaxPool1d(1), (2, 4, 9), {"GlobalMaxPool"}),
    (nn.AdaptiveMaxPool1d(3), (2, 4, 9), {"MaxPool"}),
    (nn.AdaptiveMaxPool1d(4), (2, 4, 9), {"Gather", "ReduceMax"}),
    (nn.AdaptiveAvgPool2d(1), (2, 4, 6, 10), {"GlobalAveragePool"}),
    (nn.AdaptiveAvgPool2d((1, 1)), (1, 8, 7, 7), {"GlobalAveragePool"}),
    (nn.AdaptiveAvgPool2d((3, 5)), (2, 4, 6, 10), {"AveragePool"}),
    (nn.AdaptiveAvgPool2d((4, None)), (2, 4, 6, 10), {"MatMul"}),
    (nn.AdaptiveAvgPool2d(3), (2, 4, 7, 8), {"MatMul"}),
    (nn.AdaptiveMaxPool2d(1), (2, 4, 6, 10), {"GlobalMaxPool"}),
    (nn.AdaptiveMaxPool2d((2, 5)), (2, 4, 6, 10), {"MaxPool"}),
    (nn.AdaptiveMaxPool2d(3), (2, 4, 7, 8), {"Gather", "ReduceMax"}),
    (nn.AdaptiveAvgPool3d(1), (1, 3, 4, 6, 5), {"GlobalAveragePool"}),
    (nn.AdaptiveAvgPool3d((2, 3, 5)), (1, 3, 4, 6, 5), {"AveragePool"}),
    (nn.AdaptiveAvgPool3d((3, 4, 2)), (1, 3, 4, 6, 5), {"MatMul"}),
    (nn.AdaptiveMaxPool3d(1), (1, 3, 4, 6, 5), {"GlobalMaxPool"}),
    (nn.AdaptiveMaxPool3d((2, 2, 1)), (1, 3, 4, 6, 5), {"MaxPool"}),
    (nn.AdaptiveMaxPool3d((3, 4, 2)), (1, 3, 4, 6, 5), {"Gather", "ReduceMax"}),
]


class Pooled(nn.Module):
    """``pool(x + 1)``; ``in_place`` writes the + 1 in place, so the export decomposes the program."""

    def __init__(self, pool: nn.Module, in_place: bool) -> None:
        super().__init__()
        self.pool, self.in_place = pool, in_place

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.in_place:
            x = x.clone()
            x.add_(1.0)
        else:
            x = x + 1.0
        return self.pool(x)


def _layout(x: torch.Tensor, channels_last: bool) -> torch.Tensor:
    if not channels_last:
        return x
    return x.contiguous(memory_format=torch.channels_last if x.dim() == 4 else torch.channels_last_3d)


def _params() -> list:
    """Every pool traced and decomposed, contiguous and (2-d, 3-d) channels last."""
    out = []
    for pool, shape, ops in POOLS:
        name = f"{type(pool).__name__}-{pool.output_size}-{'x'.join(map(str, shape))}"
        for in_place in (False, True):
            for channels_last in (False, True) if len(shape) > 3 else (False,):
                tag = f"{name}-{'decomposed' if in_place else 'traced'}-{'channels_last' if channels_last else 'contiguous'}"
                out.append(pytest.param(pool, shape, ops, in_place, channels_last, id=tag))
    return out


@pytest.mark.parametrize(("pool", "shape", "ops", "in_place", "channels_last"), _params())
def test_adaptive_pool_exports_as_pooling(pool, shape, ops, in_place, channels_last) -> None:
    module = Pooled(pool, in_place).eval()
    x = _layout(torch.randn(shape), channels_last)
    model = onnxport.export_model(module, (x,))
    got = op_types(model)
    assert ops <= got, got
    assert not {"GlobalAveragePool", "GlobalMaxPool", "AveragePool", "MaxPool", "MatMul", "Gather"} - ops & got, got
    compare(module, check_model(model), (x,), rtol=1e-5, atol=1e-6)


class LayerNorm2d(nn.LayerNorm):
    """LayerNorm over the channels of an NCHW tensor (ConvNeXt's downsampling norm)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return super().forward(x.permute(0, 2, 3, 1)).permute(0, 3, 1, 2)


class Block(nn.Module):
    """A ConvNeXt block: depthwise 7x7, LayerNorm over channels (channels last), MLP, layer scale, residual."""

    def __init__(self, c: int, in_place: bool) -> None:
        super().__init__()
        self.dw = nn.Conv2d(c, c, 7, padding=3, groups=c)
        self.norm = nn.LayerNorm(c)
        self.fc1, self.act, self.fc2 = nn.Linear(c, 4 * c), nn.GELU(), nn.Linear(4 * c, c)
        self.gamma = nn.Parameter(torch.full((c,), 0.5))
        self.in_place = in_place

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.dw(x).permute(0, 2, 3, 1)
        y = (self.fc2(self.act(self.fc1(self.norm(y)))) * self.gamma).permute(0, 3, 1, 2)
        if self.in_place:  # a residual written in place, as some implementations do
            out = x.clone()
            out.add_(y)
            return out
        return x + y


class ConvNeXtLike(nn.Module):
    def __init__(self, pool: nn.Module, in_place: bool, c: int = 16, classes: int = 10) -> None:
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, c, 4, stride=4), LayerNorm2d(c))
        self.stages = nn.Sequential(Block(c, in_place), LayerNorm2d(c), nn.Conv2d(c, 2 * c, 2, stride=2),
                                    Block(2 * c, in_place))
        self.pool = pool
        out = pool.output_size if isinstance(pool.output_size, int) else pool.output_size[0]
        self.head = nn.Sequential(nn.Flatten(), nn.LayerNorm(2 * c * out * out), nn.Linear(2 * c * out * out, classes))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.pool(self.stages(self.stem(x))))


@pytest.mark.parametrize("channels_last", [False, True], ids=["contiguous", "channels_last"])
@pytest.mark.parametrize("in_place", [False, True], ids=["traced", "decomposed"])
@pytest.mark.parametrize(("pool", "ops"), [(nn.AdaptiveAvgPool2d(1), {"GlobalAveragePool"}),
                                           (nn.AdaptiveAvgPool2d(2), {"AveragePool"}),
                                           (nn.AdaptiveMaxPool2d(1), {"GlobalMaxPool"})],
                         ids=["avg1", "avg2", "max1"])
def test_convnext_like_model_exports(pool, ops, in_place, channels_last) -> None:
    module = ConvNeXtLike(pool, in_place).eval()
    x = torch.randn(2, 3, 32, 32)
    if channels_last:
        module = module.to(memory_format=torch.channels_last)
        x = x.contiguous(memory_format=torch.channels_last)
    model = onnxport.export_model(module, (x,))
    assert ops <= op_types(model)
    compare(module, check_model(model), (x,), rtol=1e-4, atol=1e-5)


def test_uneven_adaptive_max_pool_with_a_symbolic_size_is_a_named_error() -> None:
    module = Pooled(nn.AdaptiveMaxPool2d(3), in_place=False).eval()
    x = torch.randn(2, 4, 7, 8)
    h = torch.export.Dim("h", min=4, max=64)
    with pytest.raises(ConversionError, match=r"adaptive_max_pool .*symbolic.*not dividing"):
        onnxport.export_model(module, (x,), dynamic_shapes={"x": {2: h}})
