"""Normalization layers: BatchNormalization and LayerNormalization (native ``nn.BatchNorm*d`` /
``nn.LayerNorm`` when their tensors are initializers), Instance, Group, RMS, MeanVariance, Lp, LRN
(``nn.LocalResponseNorm`` for an odd size)."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from onnxport import importer

from ... import dtypes
from ._modules import bind


def _stash(ctx, x, stash_type):
    """The dtype statistics are computed in (``stash_type``; float32 by default)."""
    try:
        want = dtypes.to_torch_dtype(int(stash_type))
    except Exception:  # noqa: BLE001 - an unknown code
        raise ctx.error(f"stash_type {stash_type} is not a floating type") from None
    if not want.is_floating_point:
        return x.dtype
    # never narrower than the input: onnxruntime and onnx.reference keep float64 statistics for
    # float64 data whatever stash_type says
    return want if torch.finfo(want).bits >= torch.finfo(x.dtype).bits else x.dtype


def _bcast(t, rank, axis=1):
    """A per-channel 1-D tensor shaped to broadcast against a rank-``rank`` tensor at ``axis``."""
    return t.reshape([-1 if i == axis else 1 for i in range(rank)])


@importer("BatchNormalization", since=15)
def batch_norm(ctx, x, scale, bias, mean, var, *, epsilon, momentum, training_mode):
    if not training_mode:
        return F.batch_norm(x, mean, var, scale, bias, False, 0.0, epsilon)
    # training form: batch statistics normalize; running statistics come back updated
    dims = [0] + list(range(2, x.dim()))
    cur_mean = x.mean(dim=dims)
    cur_var = x.var(dim=dims, unbiased=False)
    y = (x - _bcast(cur_mean, x.dim())) / torch.sqrt(_bcast(cur_var, x.dim()) + epsilon)
    y = y * _bcast(scale, x.dim()) + _bcast(bias, x.dim())
    new_mean = mean * momentum + cur_mean.to(mean.dtype) * (1 - momentum)
    new_var = var * momentum + cur_var.to(var.dtype) * (1 - momentum)
    return (y, new_mean, new_var)[: ctx.num_outputs] if ctx.num_outputs > 1 else y


@batch_norm.module_builder
def batch_norm_module(ctx, *, epsilon, momentum, training_mode):
    if training_mode or ctx.num_outputs > 1 or not all(ctx.is_initializer(i) for i in range(1, 5)):
        return None
    shape = ctx.input_shape(0)
    rank = len(shape) if shape is not None else None
    cls = {2: nn.BatchNorm1d, 3: nn.BatchNorm1d, 4: nn.BatchNorm2d, 5: nn.BatchNorm3d}.get(rank)
    if cls is None:
        return None
    mean, var = ctx.param(3), ctx.param(4)
    if isinstance(mean, nn.Parameter) or isinstance(var, nn.Parameter):
        return None
    scale = ctx.param(1)
    # ONNX momentum weighs the running value; torch's weighs the batch value
    m = cls(scale.shape[0], eps=epsilon, momentum=1 - momentum, device="meta")
    bind(m, "weight", scale)
    bind(m, "bias", ctx.param(2))
    bind(m, "running_mean", mean)
    bind(m, "running_var", var)
    m.register_buffer("num_batches_tracked", torch.tensor(0, dtype=torch.long))
    return m, [0]


@importer("InstanceNormalization", since=22)
def instance_norm(ctx, x, scale, bias, *, epsilon):
    return F.instance_norm(x, weight=scale, bias=bias, eps=epsilon)


@importer("LayerNormalization", since=17)
def layer_norm(ctx, x, scale, bias=None, *, axis, epsilon, stash_type):
    axis = axis % x.dim()
    dims = tuple(range(axis, x.dim()))
    xs = x.to(_stash(ctx, x, stash_type))
    mean = xs.mean(dim=dims, keepdim=True)
    d = xs - mean
    inv_std = torch.rsqrt((d * d).mean(dim=dims, keepdim=True) + epsilon)
    y = (d * inv_std).to(x.dtype) * scale
    if bias is not None:
        y = y + bias
    if ctx.num_outputs == 1:
        return y
    return (y, mean, inv_std)[: ctx.num_outputs]


@layer_norm.module_builder
def layer_norm_module(ctx, *, axis, epsilon, stash_type):
    if ctx.num_outputs > 1 and any(ctx.output_used(i) for i in range(1, ctx.num_outputs)):
        return None
    shape = ctx.input_shape(0)
    if shape is None or not ctx.is_initializer(1):
        return None
    has_bias = ctx.num_inputs > 2 and bool(ctx.weight_name(2))
    if has_bias and not ctx.is_initializer(2):
        return None
    if ctx.input_dtype(0) != dtypes.DT.FLOAT or int(stash_type) != 1:
        return None  # nn.LayerNorm computes in the input's own type
    axis = axis % len(shape)
    normalized = shape[axis:]
    if not all(isinstance(d, int) for d in normalized):
        return None
    scale = ctx.param(1)
    bias = ctx.param(2) if has_bias else None
    if list(scale.shape) != list(normalized) or (bias is not None and list(bias.shape) != list(normalized)):
        return None
    m = nn.LayerNorm(list(normalized), eps=epsilon, bias=has_bias, device="meta")
    bind(m, "weight", scale)
    if has_bias:
        bind(m, "bias", bias)
    return m, [0]


@importer("GroupNormalization", since=21)
def group_norm(ctx, x, scale, bias, *, epsilon, num_groups, stash_type):
    n, c = x.shape[:2]
    xs = x.to(_stash(ctx, x, stash_type)).reshape(n, int(num_groups), -1)
    mean = xs.mean(dim=-1, keepdim=True)
    d = xs - mean
    y = (d * torch.rsqrt((d * d).mean(dim=-1, keepdim=True) + epsilon)).reshape(x.shape).to(x.dtype)
    return y * _bcast(scale, x.dim()) + _bcast(bias, x.dim())


@importer("RMSNormalization", since=23)
def rms_norm(ctx, x, scale, *, axis, epsilon, stash_type):
    dims = tuple(range(axis % x.dim(), x.dim()))
    xs = x.to(_stash(ctx, x, stash_type))
    y = xs * torch.rsqrt((xs * xs).mean(dim=dims, keepdim=True) + epsilon)
    return y.to(x.dtype) * scale


@importer("MeanVarianceNormalization", since=13)
def mean_variance_norm(ctx, x, *, axes):
    dims = tuple(int(a) % x.dim() for a in axes)
    mean = x.mean(dim=dims, keepdim=True)
    var = (x * x).mean(dim=dims, keepdim=True) - mean * mean
    return (x - mean) / (torch.sqrt(var) + 1e-9)


@importer("LpNormalization", since=22)
def lp_norm(ctx, x, *, axis, p):
    if p not in (1, 2):
        raise ctx.error(f"LpNormalization p={p}; ONNX allows 1 or 2")
    norm = x.abs().sum(dim=axis, keepdim=True) if p == 1 else torch.sqrt((x * x).sum(dim=axis, keepdim=True))
    return torch.where(norm == 0, torch.zeros_like(x), x / norm)  # a zero vector stays zero


@importer("LRN", since=13)
def lrn(ctx, x, *, alpha, beta, bias, size):
    half_cpu = x.device.type == "cpu" and x.dtype in (torch.float16, torch.bfloat16)
    xs = x.float() if half_cpu else x  # torch's CPU pooling inside has no half kernel
    size = int(size)
    if size % 2:
        y = F.local_response_norm(xs, size, alpha=alpha, beta=beta, k=bias)
    else:
        # ONNX sums channels [c - (size - 1) // 2, c + size // 2]; torch's window for an even size
        # is one channel lower, so the same computation with the channel padding swapped
        sq = (xs * xs).reshape(xs.shape[0], 1, xs.shape[1], -1)
        sq = F.pad(sq, (0, 0, (size - 1) // 2, size // 2))
        div = F.avg_pool2d(sq, (size, 1), stride=1).reshape(xs.shape)
        y = xs / div.mul(alpha).add(bias).pow(beta)
    return y.to(x.dtype)


@lrn.module_builder
def lrn_module(ctx, *, alpha, beta, bias, size):
    # nn.LocalResponseNorm (exported back as LRN) for an odd size, in a type torch pools on CPU
    if int(size) % 2 == 0 or ctx.input_dtype(0) not in (dtypes.DT.FLOAT, dtypes.DT.DOUBLE):
        return None
    return nn.LocalResponseNorm(int(size), alpha=alpha, beta=beta, k=bias), [0]
