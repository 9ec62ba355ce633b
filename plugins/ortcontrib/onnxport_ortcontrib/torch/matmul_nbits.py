"""MatMulNBits (com.microsoft) for torch: ``A @ dequantize(B).T + bias`` with B packed 2, 4 or 8
bits per value in blocks along K. B stays packed (uint8, as the file stores it) and is unpacked
on each call."""

from __future__ import annotations

import torch

from onnxport import importer

from .. import DOMAIN
from ..cases import matmul_nbits as C
from ..cases.matmul_nbits import TEST_TOLERANCES  # noqa: F401  (the testkit reads it here)
from ..opmath import nbits_layout, nbits_shifts


def _unpack(packed, bits, count):
    """uint8 (rows, bytes) -> the first ``count`` ``bits``-wide values of each row, as int32."""
    shifts = torch.as_tensor(nbits_shifts(bits), device=packed.device)
    vals = (packed[..., None] >> shifts) & ((1 << bits) - 1)
    return vals.reshape(packed.shape[0], -1)[:, :count].to(torch.int32)


@importer("MatMulNBits", since=1, domain=DOMAIN, cases=C.matmul_nbits_cases())
def matmul_nbits(ctx, a, b, scales, zero_points=None, g_idx=None, bias=None, *, K, N, bits=4, block_size,
                 accuracy_level=0):
    """Each row n of the (N, K) weight is ``(q - zero_point) * scale`` per block (per column k with
    ``g_idx``: group ``g_idx[k]``); zero points default to ``2**(bits-1)``, come packed (uint8) or
    as floats. ``accuracy_level`` only lets onnxruntime lower its precision: this computes at
    the most accurate level."""
    with ctx.raising():
        k_blocks, _ = nbits_layout(K, N, bits, block_size, tuple(b.shape))
    dtype = a.dtype
    q = _unpack(b.reshape(N, -1), bits, k_blocks * block_size)  # (N, k_blocks * block)
    s = scales.reshape(N, k_blocks).float()
    if zero_points is None:
        zp = torch.full((N, k_blocks), float(1 << (bits - 1)), device=a.device)
    elif zero_points.dtype == torch.uint8:
        zp = _unpack(zero_points.reshape(N, -1), bits, k_blocks).float()
    else:
        zp = zero_points.reshape(N, k_blocks).float()
    if g_idx is not None:
        groups = g_idx.long()
        w = (q[:, :K].float() - zp[:, groups]) * s[:, groups]
    else:
        w = ((q.float().reshape(N, k_blocks, block_size) - zp[..., None]) * s[..., None]).reshape(N, -1)[:, :K]
    if dtype == torch.float16:
        w = w.to(dtype).float()  # onnxruntime dequantizes half weights in half precision
    y = a.float() @ w.T
    if bias is not None:
        y = y + bias.float()
    return y.to(dtype)
