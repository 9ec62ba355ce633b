"""MatMulIntegerToFloat and DynamicQuantizeMatMul (com.microsoft) for torch: an exact integer
product, scaled to float."""

from __future__ import annotations

import torch

from onnxport import importer

from .. import DOMAIN
from ..cases import quantization as C
from ..cases.quantization import TEST_TOLERANCES  # noqa: F401  (the testkit reads it here)
from ..opmath import DYNAMIC_QMAX


def _centered(x, zero_point):
    x = x.to(torch.int64)
    return x if zero_point is None else x - zero_point.to(torch.int64)


@importer("MatMulIntegerToFloat", since=1, domain=DOMAIN, cases=C.matmul_integer_to_float_cases())
def matmul_integer_to_float(ctx, a, b, a_scale, b_scale, a_zero_point=None, b_zero_point=None, bias=None):
    """``((A - a_zero_point) @ (B - b_zero_point)) * (a_scale * b_scale) + bias``; B's scale and
    zero point are per tensor or per column; the product is exact (int64, then float32)."""
    acc = torch.matmul(_centered(a, a_zero_point).double(), _centered(b, b_zero_point).double())
    y = acc.float() * (a_scale.float() * b_scale.float())
    if bias is not None:
        y = y + bias.float()
    return y.to(a_scale.dtype)


@importer("DynamicQuantizeMatMul", since=1, domain=DOMAIN, cases=C.dynamic_quantize_matmul_cases())
def dynamic_quantize_matmul(ctx, a, b, b_scale, b_zero_point=None, bias=None):
    """A quantized to uint8 over its range with 0 included (scale ``(max - min) / 255``, zero point
    ``round(-min / scale)``, half to even, as DynamicQuantizeLinear), then MatMulIntegerToFloat."""
    a = a.float()
    low = torch.clamp(a.min(), max=0.0)
    high = torch.clamp(a.max(), min=0.0)
    scale = (high - low) / DYNAMIC_QMAX
    safe = torch.where(scale == 0, torch.ones_like(scale), scale)
    zero_point = torch.clamp(torch.round(-low / safe), 0, DYNAMIC_QMAX)
    q = torch.clamp(torch.round(a / safe) + zero_point, 0, DYNAMIC_QMAX)
    acc = torch.matmul((q - zero_point).double(), _centered(b, b_zero_point).double())
    y = acc.float() * (scale * b_scale.float())
    if bias is not None:
        y = y + bias.float()
    return y
