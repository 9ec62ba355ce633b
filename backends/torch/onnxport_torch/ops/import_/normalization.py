"""BatchNormalization (``nn.BatchNorm1d/2d/3d`` when its tensors are initializers) and LRN."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from onnxport import importer

from ._modules import bind


@importer("BatchNormalization", since=15)
def batch_norm(ctx, x, scale, bias, mean, var, *, epsilon, momentum, training_mode):
    training = bool(training_mode)
    if training:
        y = F.batch_norm(x, mean.clone(), var.clone(), scale, bias, True, 1 - momentum, epsilon)
        dims = [0] + list(range(2, x.dim()))
        cur_mean = x.mean(dim=dims)
        cur_var = x.var(dim=dims, unbiased=False)
        new_mean = mean * momentum + cur_mean * (1 - momentum)
        new_var = var * momentum + cur_var * (1 - momentum)
        return y, new_mean, new_var
    return F.batch_norm(x, mean, var, scale, bias, False, 0.0, epsilon)


@batch_norm.module_builder
def batch_norm_module(ctx, *, epsilon, momentum, training_mode):
    if training_mode or ctx.num_outputs > 1 or not all(ctx.is_initializer(i) for i in range(1, 5)):
        return None
    shape = ctx.input_shape(0)
    rank = len(shape) if shape is not None else None
    cls = {2: nn.BatchNorm1d, 3: nn.BatchNorm1d, 4: nn.BatchNorm2d, 5: nn.BatchNorm3d}.get(rank)
    if cls is None:
        return None
    scale = ctx.param(1)
    m = cls(scale.shape[0], eps=epsilon, momentum=1 - momentum, device="meta")
    bind(m, "weight", scale)
    bind(m, "bias", ctx.param(2))
    mean, var = ctx.param(3), ctx.param(4)
    if isinstance(mean, nn.Parameter) or isinstance(var, nn.Parameter):
        return None
    bind(m, "running_mean", mean)
    bind(m, "running_var", var)
    m.register_buffer("num_batches_tracked", torch.tensor(0, dtype=torch.long))
    return m, [0]


@importer("LRN", since=13)
def lrn(ctx, x, *, alpha, beta, bias, size):
    return F.local_response_norm(x, size, alpha=alpha, beta=beta, k=bias)
