"""_softmax / _log_softmax -> Softmax / LogSoftmax."""

from __future__ import annotations

import torch
from torch import nn

from onnxport import Sample, exporter


@exporter("aten._softmax.default", samples=[Sample(nn.Softmax(dim=1), (torch.randn(2, 5, 3),), emits=("Softmax",))])
def softmax(g, x, dim, half_to_float=False):
    return g.op("Softmax", x, axis=int(dim))


@exporter("aten._log_softmax.default", samples=[Sample(nn.LogSoftmax(dim=-1), (torch.randn(2, 5),), emits=("LogSoftmax",))])
def log_softmax(g, x, dim, half_to_float=False):
    return g.op("LogSoftmax", x, axis=int(dim))
