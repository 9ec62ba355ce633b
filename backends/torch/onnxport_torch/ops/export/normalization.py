"""Normalization: batch norm (inference), layer norm, group norm (-> BatchNormalization, LayerNormalization ...)."""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from onnxport import Sample, exporter


def _bn():
    m = nn.BatchNorm2d(4)
    m.running_mean.uniform_(-1, 1)
    m.running_var.uniform_(0.5, 2)
    m.weight.data.uniform_(0.5, 1.5)
    return m


@exporter(
    "aten._native_batch_norm_legit_no_training.default",
    samples=[Sample(_bn(), (torch.randn(2, 4, 5, 5),), emits=("BatchNormalization",)),
             Sample(nn.BatchNorm1d(4, affine=False), (torch.randn(3, 4),), emits=("BatchNormalization",), name="no_affine")],
)
def batch_norm(g, x, weight, bias, running_mean, running_var, momentum, eps):
    """Inference batch norm with the running statistics."""
    c = x.shape[1]
    dt = x.dtype.numpy()
    if weight is None:
        weight = g.const(np.ones([c], dtype=dt))
    if bias is None:
        bias = g.const(np.zeros([c], dtype=dt))
    y = g.op("BatchNormalization", x, weight, bias, running_mean, running_var,
             epsilon=float(eps), momentum=float(1 - momentum))
    return (y, None, None)


def _layer_norm(g, x, normalized_shape, weight, bias, eps, outputs):
    if weight is None:
        weight = g.const(np.ones(list(normalized_shape), dtype=x.dtype.numpy()))
    return g.op("LayerNormalization", x, weight, bias, axis=-len(normalized_shape),
                epsilon=float(eps), outputs=outputs)


@exporter("aten.layer_norm.default", samples=[Sample(nn.LayerNorm(8), (torch.randn(2, 3, 8),), emits=("LayerNormalization",)),
                                              Sample(nn.LayerNorm([3, 8], bias=False), (torch.randn(2, 3, 8),), emits=("LayerNormalization",), name="no_bias")])
def layer_norm(g, x, normalized_shape, weight=None, bias=None, eps=1e-5, cudnn_enable=True):
    return _layer_norm(g, x, normalized_shape, weight, bias, eps, 1)


@exporter("aten.native_layer_norm.default", samples=[Sample(lambda x, w: torch.native_layer_norm(x, [8], w, None, 1e-5)[0], (torch.randn(2, 3, 8), torch.rand(8)), emits=("LayerNormalization",))])
def native_layer_norm(g, x, normalized_shape, weight, bias, eps):
    """Output, mean and 1/std (all three as ONNX gives them)."""
    return _layer_norm(g, x, normalized_shape, weight, bias, eps, 3)


@exporter("aten.native_group_norm.default", samples=[Sample(nn.GroupNorm(2, 6), (torch.randn(2, 6, 4, 4),), emits=("InstanceNormalization",))])
def group_norm(g, x, weight, bias, n, c, hxw, group, eps):
    """Reshape to (N, G, -1), InstanceNormalization, reshape back, per-channel affine."""
    dt = x.dtype.numpy()
    flat = g.op("Reshape", x, g.ints([0, int(group), -1]))
    ones = g.const(np.ones([int(group)], dtype=dt))
    zeros = g.const(np.zeros([int(group)], dtype=dt))
    y = g.op("InstanceNormalization", flat, ones, zeros, epsilon=float(eps))
    y = g.op("Reshape", y, g.op("Shape", x))
    tail = g.const(np.asarray(list(range(1, g.rank(x) - 1)), dtype=np.int64))
    if weight is not None:
        y = g.op("Mul", y, g.op("Unsqueeze", weight, tail))
    if bias is not None:
        y = g.op("Add", y, g.op("Unsqueeze", bias, tail))
    return (y, None, None)
