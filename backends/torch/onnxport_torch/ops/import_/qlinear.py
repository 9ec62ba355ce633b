"""Integer and quantized linear algebra: MatMulInteger, QLinearMatMul, QLinearConv.

torch has no integer matmul/conv kernels on every device: the zero-point-shifted 8-bit values are
multiplied in float64, which holds every 8-bit product sum exactly, then converted back.
"""

from __future__ import annotations

import torch

from onnxport import importer

from .conv import conv


def _shift(t, zero_point, axis: int | None = None):
    t = t.to(torch.float64)
    if zero_point is None:
        return t
    zp = zero_point.to(torch.float64)
    if axis is not None and zp.dim() == 1 and zp.numel() > 1:
        zp = zp.reshape([-1 if i == axis % t.dim() else 1 for i in range(t.dim())])
    return t - zp


def _requantize(acc, scale, y_scale, y_zero_point, out_dtype: torch.dtype):
    info = torch.iinfo(out_dtype)
    y = torch.round(acc * (scale / y_scale).to(torch.float64))
    if y_zero_point is not None:
        y = y + y_zero_point.to(torch.float64)
    return y.clamp(info.min, info.max).to(out_dtype)


@importer("MatMulInteger", since=10)
def matmul_integer(ctx, a, b, a_zero_point=None, b_zero_point=None):
    # a's zero point may be per row (axis -2 of a), b's per column (last axis of b)
    acc = torch.matmul(_shift(a, a_zero_point, -2 if a.dim() > 1 else None), _shift(b, b_zero_point, -1))
    return acc.round().to(torch.int32)


@importer("QLinearMatMul", since=21)
def qlinear_matmul(ctx, a, a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale, y_zero_point):
    acc = torch.matmul(_shift(a, a_zero_point, -2 if a.dim() > 1 else None), _shift(b, b_zero_point, -1))
    scale = a_scale.to(torch.float32) * b_scale.to(torch.float32)
    out = y_zero_point.dtype if y_zero_point is not None else a.dtype
    return _requantize(acc, scale, y_scale.to(torch.float32), y_zero_point, out)


@importer("QLinearConv", since=10)
def qlinear_conv(ctx, x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale, y_zero_point, b=None, *,
                 auto_pad, dilations, group, kernel_shape, pads, strides):
    acc = conv(ctx, _shift(x, x_zero_point), _shift(w, w_zero_point, 0), None, auto_pad=auto_pad,
               dilations=dilations, group=group, kernel_shape=kernel_shape, pads=pads, strides=strides)
    nd = acc.dim() - 2
    if b is not None:
        acc = acc + b.to(torch.float64).reshape(1, -1, *([1] * nd))
    scale = x_scale.to(torch.float32) * w_scale.to(torch.float32)
    if scale.dim() == 1 and scale.numel() > 1:
        scale = scale.reshape(1, -1, *([1] * nd))
    out = y_zero_point.dtype if y_zero_point is not None else x.dtype
    return _requantize(acc, scale, y_scale.to(torch.float32), y_zero_point, out)
