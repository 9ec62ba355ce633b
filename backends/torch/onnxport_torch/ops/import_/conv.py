"""Conv: ``nn.Conv1d/2d/3d`` when the weight is an initializer, ``F.conv*d`` otherwise."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from onnxport import importer

from ._modules import bind
from ._padding import explicit_pads, same_pads, split_pads


def _settings(ctx, w_shape, auto_pad, dilations, kernel_shape, pads, strides):
    nd = len(w_shape) - 2
    kernel = list(kernel_shape or w_shape[2:])
    strides = list(strides or [1] * nd)
    dilations = list(dilations or [1] * nd)
    return nd, kernel, strides, dilations


@importer("Conv", since=22)
def conv(ctx, x, w, b=None, *, auto_pad, dilations, group, kernel_shape, pads, strides):
    nd, kernel, strides, dilations = _settings(ctx, w.shape, auto_pad, dilations, kernel_shape, pads, strides)
    if nd not in (1, 2, 3):
        raise ctx.error(f"{nd}-D convolution is not supported by torch")
    if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        pads = same_pads(x.shape[2:], kernel, strides, dilations, auto_pad)
    elif auto_pad == "VALID":
        pads = [0] * (2 * nd)
    pads = explicit_pads(pads, nd)
    symmetric, pre = split_pads(pads, nd)
    if pre is not None:
        x = F.pad(x, pre)
    fn = (F.conv1d, F.conv2d, F.conv3d)[nd - 1]
    return fn(x, w, b, strides, symmetric, dilations, group)


@conv.module_builder
def conv_module(ctx, *, auto_pad, dilations, group, kernel_shape, pads, strides):
    if not ctx.is_initializer(1) or (ctx.num_inputs > 2 and ctx.weight_name(2) and not ctx.is_initializer(2)):
        return None
    if auto_pad not in ("NOTSET", "VALID") and auto_pad != "":
        return None
    w = ctx.param(1)
    nd, kernel, strides, dilations = _settings(ctx, w.shape, auto_pad, dilations, kernel_shape, pads, strides)
    if nd not in (1, 2, 3) or list(kernel) != list(w.shape[2:]):
        return None
    pads = [0] * (2 * nd) if auto_pad == "VALID" else explicit_pads(pads, nd)
    symmetric, pre = split_pads(pads, nd)
    if pre is not None:
        return None
    cls = (nn.Conv1d, nn.Conv2d, nn.Conv3d)[nd - 1]
    has_bias = ctx.num_inputs > 2 and bool(ctx.weight_name(2))
    m = cls(w.shape[1] * group, w.shape[0], kernel, strides, symmetric, dilations, group,
            bias=has_bias, device="meta")
    bind(m, "weight", w)
    bind(m, "bias", ctx.param(2) if has_bias else None)
    return m, [0]


def _shifted(t, zero_point, channel_dim):
    """``t - zero_point`` in float64 (exact for 8-bit data); a 1-D zero point is per channel."""
    t = t.to(torch.float64)
    if zero_point is None:
        return t
    zp = zero_point.to(torch.float64)
    if zp.dim() == 1 and zp.numel() > 1:
        zp = zp.reshape([-1 if i == channel_dim else 1 for i in range(t.dim())])
    return t - zp


@importer("ConvInteger", since=10)
def conv_integer(ctx, x, w, x_zero_point=None, w_zero_point=None, *, auto_pad, dilations, group,
                 kernel_shape, pads, strides):
    # integer convolution has no torch kernel: float64 holds every 8-bit product sum exactly
    y = conv(ctx, _shifted(x, x_zero_point, 1), _shifted(w, w_zero_point, 0), None, auto_pad=auto_pad,
             dilations=dilations, group=group, kernel_shape=kernel_shape, pads=pads, strides=strides)
    return y.round().to(torch.int32)
