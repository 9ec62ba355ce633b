"""QuantizeLinear, DequantizeLinear (per-tensor, per-axis, blocked; integer and float8 types)
and DynamicQuantizeLinear."""

from __future__ import annotations

import onnx_ir as ir
import torch

from onnxport import importer

from ... import dtypes

DT = ir.DataType

#: saturation ranges of the integer quantized types (2- and 4-bit types are held widened)
INT_RANGES: dict[DT, tuple[int, int]] = {
    DT.UINT8: (0, 255), DT.INT8: (-128, 127), DT.UINT16: (0, 65535), DT.INT16: (-32768, 32767),
    DT.UINT4: (0, 15), DT.INT4: (-8, 7), DT.UINT2: (0, 3), DT.INT2: (-2, 1),
}
_FLOAT8 = {DT.FLOAT8E4M3FN, DT.FLOAT8E4M3FNUZ, DT.FLOAT8E5M2, DT.FLOAT8E5M2FNUZ}


def expand_param(t, x, axis: int, block_size: int):
    """A scale or zero point shaped to broadcast against ``x`` (scalar, per-axis or blocked)."""
    if t.dim() == 0 or t.numel() == 1 and x.dim() == 0:
        return t.reshape(())
    axis = axis % x.dim()
    if block_size and block_size > 0:
        t = t.repeat_interleave(int(block_size), dim=axis).narrow(axis, 0, x.shape[axis])
        return t
    if t.dim() == 1:
        return t.reshape([-1 if i == axis else 1 for i in range(x.dim())])
    return t


def quantized_type(ctx, zero_point, output_dtype: int) -> DT:
    """The ONNX element type of a QuantizeLinear result."""
    if zero_point is not None and ctx.input_dtype(2) is not None:
        return DT(ctx.input_dtype(2))
    if output_dtype:
        return DT(output_dtype)
    out = ctx.output_dtype(0)
    return DT(out) if out is not None else DT.UINT8


def saturate_float8(y, target: torch.dtype, saturate: bool):
    """Cast to a float8 type; with ``saturate`` out-of-range values (and inf) clamp to the largest."""
    if saturate:
        big = torch.finfo(target).max
        y = torch.where(torch.isnan(y), y, y.clamp(-big, big))
    return y.to(target)


def round_float4e2m1(y):
    """Round to the nearest FLOAT4E2M1 value (ties to even mantissa), saturating at +-6."""
    mag = y.abs().clamp(max=6.0)
    step = torch.where(mag < 2, 0.5, torch.where(mag < 4, 1.0, 2.0))
    return torch.copysign(torch.round(mag / step) * step, y)


@importer("QuantizeLinear", since=25)
def quantize_linear(ctx, x, y_scale, y_zero_point=None, *, axis, block_size, output_dtype, precision,
                    saturate):
    qtype = quantized_type(ctx, y_zero_point, output_dtype)
    scale = expand_param(y_scale, x, axis, block_size)
    if precision:
        p = dtypes.to_torch_dtype(precision)
        y = x.to(p) / scale.to(p)
    else:
        y = x / scale
    if qtype in _FLOAT8:
        return saturate_float8(y.to(torch.float32), dtypes.to_torch_dtype(qtype), bool(saturate))
    if qtype == DT.FLOAT4E2M1:  # held widened in float32
        if y_zero_point is not None:
            y = y + expand_param(y_zero_point, x, axis, block_size).to(y.dtype)
        return round_float4e2m1(y.to(torch.float32))
    if qtype not in INT_RANGES:
        raise ctx.error(f"QuantizeLinear to {qtype.name} has no torch equivalent")
    lo, hi = INT_RANGES[qtype]
    q = torch.round(y.to(torch.float64))
    if y_zero_point is not None:
        q = q + expand_param(y_zero_point, x, axis, block_size).to(torch.float64)
    return q.clamp(lo, hi).to(dtypes.to_torch_dtype(qtype))


@importer("DequantizeLinear", since=25)
def dequantize_linear(ctx, x, x_scale, x_zero_point=None, *, axis, block_size, output_dtype):
    if x.dtype in dtypes.FLOAT_TYPES or x.dtype.is_floating_point:
        dx = x.to(torch.float32)  # float8: the zero point is zero by definition
    else:
        dx = x.to(torch.float32)
        if x_zero_point is not None:
            dx = dx - expand_param(x_zero_point, x, axis, block_size).to(torch.float32)
    y = dx * expand_param(x_scale, x, axis, block_size)
    out = dtypes.to_torch_dtype(output_dtype) if output_dtype else x_scale.dtype
    return y.to(out)


@importer("DynamicQuantizeLinear", since=11)
def dynamic_quantize_linear(ctx, x):
    zero = torch.zeros((), dtype=x.dtype, device=x.device)
    hi = torch.maximum(zero, x.max())
    lo = torch.minimum(zero, x.min())
    scale = torch.where(hi == lo, torch.ones_like(hi), hi - lo) / 255.0
    zp = torch.round((0.0 - lo / scale).clamp(0, 255))
    y = (torch.round(x / scale) + zp).clamp(0, 255)
    return y.to(torch.uint8), scale.to(x.dtype), zp.to(torch.uint8)
