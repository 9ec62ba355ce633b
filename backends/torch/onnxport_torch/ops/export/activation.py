"""Activations: relu, gelu, sigmoid, tanh, hardswish, hardsigmoid, leaky_relu, elu, hardtanh."""

from __future__ import annotations

import torch
from torch import nn

from onnxport import Sample, exporter

_X = (torch.randn(2, 3, 8),)


@exporter("aten.relu.default", samples=[Sample(nn.ReLU(), _X, emits=("Relu",))])
def relu(g, x):
    return g.op("Relu", x)


@exporter("aten.sigmoid.default", samples=[Sample(nn.Sigmoid(), _X, emits=("Sigmoid",))])
def sigmoid(g, x):
    return g.op("Sigmoid", x)


@exporter("aten.tanh.default", samples=[Sample(nn.Tanh(), _X, emits=("Tanh",))])
def tanh(g, x):
    return g.op("Tanh", x)


@exporter(
    "aten.gelu.default",
    samples=[Sample(nn.GELU(), _X, emits=("Erf",), name="erf"),  # Gelu itself from opset 20
             Sample(nn.GELU(approximate="tanh"), _X, emits=("Tanh",), name="tanh")],
)
def gelu(g, x, *, approximate="none"):
    """Gelu (opset 20); older opsets get the Erf/Tanh form from the down-adapter."""
    return g.op("Gelu", x, approximate=approximate)


@exporter("aten.hardswish.default", samples=[Sample(nn.Hardswish(), (torch.randn(2, 3, 8) * 4,), emits=("HardSwish",))])
def hardswish(g, x):
    return g.op("HardSwish", x)


@exporter("aten.hardsigmoid.default", samples=[Sample(nn.Hardsigmoid(), (torch.randn(2, 3, 8) * 4,), emits=("HardSigmoid",))])
def hardsigmoid(g, x):
    return g.op("HardSigmoid", x, alpha=1.0 / 6.0, beta=0.5)


@exporter("aten.leaky_relu.default", samples=[Sample(nn.LeakyReLU(0.2), _X, emits=("LeakyRelu",))])
def leaky_relu(g, x, negative_slope=0.01):
    return g.op("LeakyRelu", x, alpha=float(negative_slope))


@exporter("aten.elu.default", samples=[Sample(nn.ELU(0.7), _X, emits=("Elu",))])
def elu(g, x, alpha=1.0, scale=1.0, input_scale=1.0):
    if scale != 1.0 or input_scale != 1.0:
        raise g.error("elu with scale/input_scale other than 1 (selu) is not supported")
    return g.op("Elu", x, alpha=float(alpha))


@exporter("aten.hardtanh.default", samples=[Sample(nn.ReLU6(), (torch.randn(2, 3, 8) * 5,), emits=("Clip",))])
def hardtanh(g, x, min_val=-1.0, max_val=1.0):
    dt = x.dtype
    return g.op("Clip", x, g.scalar(min_val, dt), g.scalar(max_val, dt))
