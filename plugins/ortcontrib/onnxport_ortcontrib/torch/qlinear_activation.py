"""QLinearSigmoid and QLinearLeakyRelu (com.microsoft) for torch: dequantize, apply the
activation in float32, quantize (round half to even, saturate) to the input's 8-bit type."""

from __future__ import annotations

import torch

from onnxport import importer

from .. import DOMAIN
from ..cases import qlinear_activation as C
from ..cases.qlinear_activation import TEST_TOLERANCES  # noqa: F401  (the testkit reads it here)


def _apply(x, x_scale, x_zero_point, y_scale, y_zero_point, fn):
    info = torch.iinfo(x.dtype)
    xz = 0.0 if x_zero_point is None else x_zero_point.float()
    yz = 0.0 if y_zero_point is None else y_zero_point.float()
    y = fn((x.float() - xz) * x_scale.float())
    return torch.clamp(torch.round(y / y_scale.float()) + yz, info.min, info.max).to(x.dtype)


@importer("QLinearSigmoid", since=1, domain=DOMAIN, cases=C.qlinear_sigmoid_cases())
def qlinear_sigmoid(ctx, x, x_scale, x_zero_point=None, y_scale=None, y_zero_point=None):
    """``quantize(sigmoid(dequantize(x)))`` with the given scales and zero points."""
    return _apply(x, x_scale, x_zero_point, y_scale, y_zero_point, torch.sigmoid)


@importer("QLinearLeakyRelu", since=1, domain=DOMAIN, cases=C.qlinear_leaky_relu_cases())
def qlinear_leaky_relu(ctx, x, x_scale, x_zero_point=None, y_scale=None, y_zero_point=None, *, alpha=0.01):
    """``quantize(leaky_relu(dequantize(x), alpha))`` with the given scales and zero points."""
    return _apply(x, x_scale, x_zero_point, y_scale, y_zero_point,
                  lambda v: torch.where(v >= 0, v, v * alpha))
