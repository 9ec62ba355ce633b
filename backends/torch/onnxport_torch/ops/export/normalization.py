"""Normalization: batch_norm, instance_norm, group_norm, layer_norm, rms_norm (-> BatchNormalization,
InstanceNormalization, GroupNormalization, LayerNormalization, RMSNormalization ...)."""

from __future__ import annotations

import numpy as np
import onnx_ir as ir
import torch
import torch.nn.functional as F
from torch import nn

from onnxport import Sample, exporter


def _bn():
    m = nn.BatchNorm2d(4)
    m.running_mean.uniform_(-1, 1)
    m.running_var.uniform_(0.5, 2)
    m.weight.data.uniform_(0.5, 1.5)
    return m


def _filled(g, x, value, shape):
    """A tensor of ``shape`` (ints, or a 1-element value) filled with ``value``, in ``x``'s dtype."""
    if isinstance(shape, ir.Value):
        return g.op("Expand", g.scalar(value, x.dtype), shape)
    arr = np.full(list(shape), value, dtype=x.dtype.numpy())
    return g.const(arr, x.dtype if x.dtype == ir.DataType.DOUBLE else None)  # float64 stays float64


def _affine(g, x, weight, bias):
    """Per-channel scale and bias, ones and zeros where torch has none."""
    c = g.dim_size(x, 1)
    c = [c] if isinstance(c, int) else c
    weight = weight if weight is not None else _filled(g, x, 1, c)
    bias = bias if bias is not None else _filled(g, x, 0, c)
    return weight, bias


def _batch_norm(g, x, weight, bias, running_mean, running_var, training, momentum, eps):
    """BatchNormalization with the running statistics, or (``training``: a module without running
    stats) with the batch's own, biased ones. Updating running stats writes in place, which the
    exporter decomposes to an op that is not exported (call .eval())."""
    if g.rank(x) < 2:
        raise g.error(f"batch norm of a rank-{g.rank(x)} input (it needs (N, C, ...))")
    weight, bias = _affine(g, x, weight, bias)
    if training:
        axes = g.const(np.asarray([0, *range(2, g.rank(x))], dtype=np.int64))
        mean = g.op("ReduceMean", x, axes, keepdims=1)
        diff = g.op("Sub", x, mean)
        var = g.op("ReduceMean", g.op("Mul", diff, diff), axes, keepdims=1)
        flat = g.const(np.asarray([-1], dtype=np.int64))
        running_mean, running_var = g.op("Reshape", mean, flat), g.op("Reshape", var, flat)
    elif running_mean is None or running_var is None:
        raise g.error("batch norm in evaluation mode needs running_mean and running_var")
    return g.op("BatchNormalization", x, weight, bias, running_mean, running_var,
                epsilon=float(eps), momentum=float(1 - (momentum or 0)))


@exporter(
    "aten._native_batch_norm_legit_no_training.default",
    samples=[Sample(_bn(), (torch.randn(2, 4, 5, 5),), emits=("BatchNormalization",)),
             Sample(nn.BatchNorm1d(4, affine=False), (torch.randn(3, 4),), emits=("BatchNormalization",), name="no_affine")],
)
def native_batch_norm(g, x, weight, bias, running_mean, running_var, momentum, eps):
    """Inference batch norm with the running statistics."""
    y = _batch_norm(g, x, weight, bias, running_mean, running_var, False, momentum, eps)
    return (y, None, None)


@exporter(
    "aten._native_batch_norm_legit.no_stats",
    samples=[Sample(nn.BatchNorm2d(3, track_running_stats=False), (torch.randn(2, 3, 4, 5),),
                    emits=("ReduceMean", "BatchNormalization"))],
)
def native_batch_norm_no_stats(g, x, weight, bias, training, momentum, eps):
    """Batch norm with the batch's statistics (a module without running stats); the saved
    mean and inverse std (for the backward pass) are not exported."""
    for user in g.fx.users:
        if user.args[1] != 0 and user.users:
            raise g.error("the saved mean / inverse std of batch norm are not supported")
    return (_batch_norm(g, x, weight, bias, None, None, True, momentum, eps), None, None)


@exporter(
    "aten.batch_norm.default",
    samples=[Sample(_bn(), (torch.randn(2, 4, 5, 5),), emits=("BatchNormalization",), name="eval"),
             Sample(nn.BatchNorm1d(4, affine=False), (torch.randn(3, 4),), emits=("BatchNormalization",), name="no_affine"),
             Sample(nn.BatchNorm3d(3, track_running_stats=False), (torch.randn(2, 3, 2, 3, 3),),
                    emits=("ReduceMean", "BatchNormalization"), name="batch_stats"),
             Sample(lambda x, w: F.batch_norm(x, None, None, w, None, training=True, eps=1e-3),
                    (torch.randn(4, 3, 5), torch.rand(3) + 0.5), emits=("ReduceMean", "BatchNormalization"),
                    name="batch_stats_fn")],
)
def batch_norm(g, x, weight, bias, running_mean, running_var, training, momentum, eps, cudnn_enabled=True):
    return _batch_norm(g, x, weight, bias, running_mean, running_var, training, momentum, eps)


@exporter(
    "aten.instance_norm.default",
    samples=[Sample(nn.InstanceNorm2d(3, affine=True), (torch.randn(2, 3, 4, 5),), emits=("InstanceNormalization",)),
             Sample(nn.InstanceNorm1d(3), (torch.randn(2, 3, 6),), emits=("InstanceNormalization",), name="no_affine"),
             Sample(nn.InstanceNorm1d(3), (torch.randn(2, 3, 6) * 3e-3,), emits=("InstanceNormalization",), name="small"),
             Sample(nn.InstanceNorm3d(2, track_running_stats=True), (torch.randn(1, 2, 3, 3, 3),),
                    emits=("BatchNormalization",), name="running_stats")],
)
def instance_norm(g, x, weight, bias, running_mean, running_var, use_input_stats, momentum, eps, cudnn_enabled=True):
    """InstanceNormalization; with ``use_input_stats=False`` (evaluation with running stats) a
    BatchNormalization reading them."""
    if not use_input_stats:
        return _batch_norm(g, x, weight, bias, running_mean, running_var, False, momentum, eps)
    if g.rank(x) < 3:
        raise g.error(f"instance norm of a rank-{g.rank(x)} input (it needs (N, C, spatial ...))")
    weight, bias = _affine(g, x, weight, bias)
    return g.op("InstanceNormalization", x, weight, bias, epsilon=float(eps))


def _layer_norm(g, x, normalized_shape, weight, bias, eps, outputs):
    if weight is None:
        weight = _filled(g, x, 1, list(normalized_shape))
    return g.op("LayerNormalization", x, weight, bias, axis=-len(normalized_shape),
                epsilon=float(eps), outputs=outputs)


@exporter("aten.layer_norm.default", samples=[Sample(nn.LayerNorm(8), (torch.randn(2, 3, 8),), emits=("LayerNormalization",)),
                                              Sample(nn.LayerNorm([3, 8], bias=False), (torch.randn(2, 3, 8),), emits=("LayerNormalization",), name="no_bias"),
                                              # a variance near eps: a wrong epsilon shows
                                              Sample(nn.LayerNorm(8), (torch.randn(2, 3, 8) * 3e-3,), emits=("LayerNormalization",), name="small")])
def layer_norm(g, x, normalized_shape, weight=None, bias=None, eps=1e-5, cudnn_enable=True):
    return _layer_norm(g, x, normalized_shape, weight, bias, eps, 1)


@exporter("aten.native_layer_norm.default", samples=[Sample(lambda x, w: torch.native_layer_norm(x, [8], w, None, 1e-5)[0], (torch.randn(2, 3, 8), torch.rand(8)), emits=("LayerNormalization",))])
def native_layer_norm(g, x, normalized_shape, weight, bias, eps):
    """Output, mean and 1/std (all three as ONNX gives them)."""
    return _layer_norm(g, x, normalized_shape, weight, bias, eps, 3)


@exporter(
    "aten.rms_norm.default",
    samples=[Sample(nn.RMSNorm(8), (torch.randn(2, 3, 8),), emits=("ReduceMean", "Sqrt")),
             Sample(nn.RMSNorm([3, 8], eps=1e-3, elementwise_affine=False), (torch.randn(2, 3, 8),),
                    emits=("ReduceMean",), name="no_affine"),
             Sample(nn.RMSNorm(8, eps=1e-5), (torch.randn(2, 3, 8) * 3e-3,), emits=("ReduceMean", "Sqrt"), name="small"),
             Sample(nn.RMSNorm(8).half(), (torch.randn(2, 8).half(),), emits=("Cast", "ReduceMean"),
                    rtol=1e-3, atol=1e-3, name="float16")],
)
def rms_norm(g, x, normalized_shape, weight=None, eps=None):
    """RMSNormalization (opset 23); before, x / sqrt(mean(x^2) + eps) * weight. Half-precision
    inputs are computed in float32, as torch does; eps defaults to that type's machine epsilon."""
    k, rank = len(normalized_shape), g.rank(x)
    wide = ir.DataType.DOUBLE if x.dtype == ir.DataType.DOUBLE else ir.DataType.FLOAT
    if eps is None:
        eps = float(np.finfo(wide.numpy()).eps)
    if g.opset >= 23:
        scale = weight if weight is not None else _filled(g, x, 1, list(normalized_shape))
        return g.op("RMSNormalization", x, scale, axis=-k, epsilon=float(eps), stash_type=int(wide))
    xw = g.cast(x, wide)
    axes = g.const(np.arange(rank - k, rank, dtype=np.int64))
    mean = g.op("ReduceMean", g.op("Mul", xw, xw), axes, keepdims=1)
    y = g.op("Div", xw, g.op("Sqrt", g.op("Add", mean, g.scalar(float(eps), wide))))
    if weight is not None:
        y = g.op("Mul", y, g.cast(weight, wide))
    return y if x.dtype == wide else g.op("Cast", y, to=x.dtype)


def _group_norm(g, x, group, weight, bias, eps):
    """GroupNormalization from opset 21 (per-channel scale and bias; the opset-18 op scales per
    group); before, Reshape to (N, G, -1), InstanceNormalization, reshape back, per-channel affine."""
    group = int(group)
    if g.rank(x) < 2:
        raise g.error(f"group norm of a rank-{g.rank(x)} input (it needs (N, C, ...))")
    if g.opset >= 21:
        weight, bias = _affine(g, x, weight, bias)
        return g.op("GroupNormalization", x, weight, bias, num_groups=group, epsilon=float(eps))
    flat = g.op("Reshape", x, g.const(np.asarray([0, group, -1], dtype=np.int64)))
    y = g.op("InstanceNormalization", flat, _filled(g, x, 1, [group]), _filled(g, x, 0, [group]), epsilon=float(eps))
    y = g.op("Reshape", y, g.op("Shape", x))
    tail = g.const(np.asarray(list(range(1, g.rank(x) - 1)), dtype=np.int64))
    if weight is not None:
        y = g.op("Mul", y, g.op("Unsqueeze", weight, tail) if g.rank(x) > 2 else weight)
    if bias is not None:
        y = g.op("Add", y, g.op("Unsqueeze", bias, tail) if g.rank(x) > 2 else bias)
    return y


@exporter("aten.native_group_norm.default", samples=[Sample(nn.GroupNorm(2, 6), (torch.randn(2, 6, 4, 4),), emits=("InstanceNormalization",))])
def native_group_norm(g, x, weight, bias, n, c, hxw, group, eps):
    """The normalized output only (mean and rstd are not exported)."""
    return (_group_norm(g, x, group, weight, bias, eps), None, None)


@exporter(
    "aten.group_norm.default",
    samples=[Sample(nn.GroupNorm(2, 6), (torch.randn(2, 6, 4, 4),), emits=("InstanceNormalization",)),
             Sample(nn.GroupNorm(3, 6, affine=False), (torch.randn(2, 6, 5),), emits=("InstanceNormalization",), name="no_affine"),
             Sample(nn.GroupNorm(2, 6), (torch.randn(2, 6, 4) * 3e-3,), emits=("InstanceNormalization",), name="small"),
             Sample(lambda x, w, b: F.group_norm(x, 2, w, b, eps=1e-3), (torch.randn(3, 4), torch.rand(4), torch.randn(4)),
                    emits=("InstanceNormalization",), name="rank2")],
)
def group_norm(g, x, num_groups, weight=None, bias=None, eps=1e-5, cudnn_enabled=True):
    return _group_norm(g, x, num_groups, weight, bias, eps)
