"""GatherBlockQuantized (com.microsoft) for torch: gather rows of a blockwise-quantized table and
dequantize them. The table stays packed; only the gathered rows are unpacked."""

from __future__ import annotations

import onnx_ir as ir
import torch

from onnxport import importer

from .. import DOMAIN
from ..cases import gather_block_quantized as C
from ..cases.gather_block_quantized import TEST_TOLERANCES  # noqa: F401  (the testkit reads it here)
from ..opmath import gather_block_layout


def _values(x, packed, bits):
    """Quantized values as float32: uint8 bytes unpacked (first value low) or the values as they are."""
    if packed and bits == 4:
        return torch.stack((x & 0xF, x >> 4), dim=-1).reshape(*x.shape[:-1], -1).float()
    return x.float()


@importer("GatherBlockQuantized", since=1, domain=DOMAIN, cases=C.gather_block_quantized_cases())
def gather_block_quantized(ctx, data, indices, scales, zero_points=None, *, bits=4, block_size=128,
                           gather_axis=0, quantize_axis=1):
    """``take((q - zero_point) * scale, indices, gather_axis)``, scale and zero point per block of
    ``block_size`` along ``quantize_axis``; the default zero point is 8 (uint4 and packed uint8,
    4 bits), 128 (uint8, 8 bits) or 0 (int4)."""
    packed = ctx.input_dtype(0) == ir.DataType.UINT8
    with ctx.raising():
        ga, qa = gather_block_layout(tuple(ctx.input_shape(0) or data.shape), packed, bits, block_size,
                                     gather_axis, quantize_axis)
    size = data.shape[ga]
    idx = torch.where(indices < 0, indices + size, indices).long()
    rows = torch.index_select(data, ga, idx.reshape(-1))
    s = torch.index_select(scales, ga, idx.reshape(-1)).float()
    q = _values(rows, packed, bits)
    if zero_points is None:
        zp = torch.tensor(0.0 if ctx.input_dtype(0) == ir.DataType.INT4 else float(1 << (bits - 1)))
    else:
        zp = _values(torch.index_select(zero_points, ga, idx.reshape(-1)), packed, bits)
        zp = zp.narrow(qa, 0, s.shape[qa])
    length = q.shape[qa]
    if zp.dim():
        zp = zp.repeat_interleave(block_size, dim=qa).narrow(qa, 0, length)
    s = s.repeat_interleave(block_size, dim=qa).narrow(qa, 0, length)
    y = ((q - zp) * s).to(scales.dtype)
    shape = list(y.shape)
    return y.reshape(shape[:ga] + list(indices.shape) + shape[ga + 1:])
