"""Pooling: max_pool2d_with_indices, avg_pool2d, _adaptive_avg_pool2d (-> MaxPool, AveragePool, GlobalAveragePool)."""

from __future__ import annotations

import torch
from torch import nn

from onnxport import Sample, exporter

_X = torch.randn(2, 3, 9, 9)


def _pool_attrs(kernel, stride, padding, n=2):
    kernel = list(kernel) * (n if len(kernel) == 1 else 1)
    stride = list(stride) or kernel
    stride = stride * (n if len(stride) == 1 else 1)
    padding = list(padding) * (n if len(padding) == 1 else 1)
    return dict(kernel_shape=kernel, strides=stride, pads=padding * 2)


@exporter(
    "aten.max_pool2d_with_indices.default",
    samples=[Sample(nn.MaxPool2d(3, 2, 1), (_X,), emits=("MaxPool",)),
             Sample(nn.MaxPool2d(2, ceil_mode=True), (_X,), emits=("MaxPool",), name="ceil")],
)
def max_pool2d(g, x, kernel_size, stride=(), padding=(0,), dilation=(1,), ceil_mode=False):
    """MaxPool; the indices (ONNX counts them over the whole tensor) are not exported."""
    attrs = _pool_attrs(kernel_size, stride, padding)
    dilation = list(dilation) * (2 if len(dilation) == 1 else 1)
    y = g.op("MaxPool", x, dilations=dilation, ceil_mode=int(ceil_mode), **attrs)
    if g.fx.target.__name__.startswith("max_pool2d_with_indices"):
        for user in g.fx.users:
            if user.args[1] == 1 and user.users:
                raise g.error("max_pool2d's indices (max_unpool) are not supported")
        return (y, None)
    return y


@exporter(
    "aten.avg_pool2d.default",
    samples=[Sample(nn.AvgPool2d(3, 2, 1), (_X,), emits=("AveragePool",)),
             Sample(nn.AvgPool2d(3, 2, 1, count_include_pad=False, ceil_mode=True), (_X,), emits=("AveragePool",), name="exclude_pad")],
)
def avg_pool2d(g, x, kernel_size, stride=(), padding=(0,), ceil_mode=False, count_include_pad=True, divisor_override=None):
    if divisor_override is not None:
        raise g.error("avg_pool2d with divisor_override is not supported")
    attrs = _pool_attrs(kernel_size, stride, padding)
    return g.op("AveragePool", x, ceil_mode=int(ceil_mode), count_include_pad=int(count_include_pad), **attrs)


@exporter(
    "aten._adaptive_avg_pool2d.default",
    samples=[Sample(nn.AdaptiveAvgPool2d((2, 4)), (torch.randn(1, 3, 8, 8),), emits=("AveragePool",), name="even")],
)
def adaptive_avg_pool2d(g, x, output_size):
    """Global pooling, or a plain AveragePool when the input divides evenly.

    torch itself writes the (1, 1) case as ``mean.dim``; the branch serves other decompositions."""
    out = list(output_size)
    if out == [1, 1]:
        return g.op("GlobalAveragePool", x)
    ins = list(x.shape)[-2:]
    if not all(isinstance(i, int) for i in ins) or any(i % o for i, o in zip(ins, out)):
        raise g.error(f"adaptive_avg_pool2d from {ins} to {out}: only sizes that divide evenly are supported")
    k = [i // o for i, o in zip(ins, out)]
    return g.op("AveragePool", x, kernel_shape=k, strides=k)
