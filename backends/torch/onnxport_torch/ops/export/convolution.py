"""aten.convolution -> Conv / ConvTranspose."""

from __future__ import annotations

import torch
from torch import nn

from onnxport import Sample, exporter


@exporter(
    "aten.convolution.default",
    samples=[
        Sample(nn.Conv2d(3, 8, 3, padding=1), (torch.randn(1, 3, 16, 16),), emits=("Conv",), name="conv2d"),
        Sample(nn.Conv2d(4, 8, 3, stride=2, groups=2, dilation=2, bias=False), (torch.randn(2, 4, 15, 15),),
               emits=("Conv",), name="grouped_dilated"),
        Sample(nn.Conv1d(3, 4, 5, padding=2), (torch.randn(2, 3, 20),), emits=("Conv",), name="conv1d"),
        Sample(nn.ConvTranspose2d(4, 3, 3, stride=2, padding=1, output_padding=1), (torch.randn(1, 4, 8, 8),),
               emits=("ConvTranspose",), name="transposed"),
    ],
)
def convolution(g, x, w, b, stride, padding, dilation, transposed, output_padding, groups):
    """Symmetric ATen padding -> ONNX begin/end pads; bias passes through as input 3."""
    nd = len(stride)
    pads = list(padding) * 2 if len(padding) == nd else [padding[0]] * 2 * nd
    attrs = dict(strides=list(stride), pads=pads, dilations=list(dilation), group=int(groups))
    if transposed:
        if any(output_padding):
            attrs["output_padding"] = list(output_padding)
        return g.op("ConvTranspose", x, w, b, **attrs)
    return g.op("Conv", x, w, b, **attrs)
