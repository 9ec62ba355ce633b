"""DeformConv (2-D): bilinear sampling at offset kernel positions, then a grouped matmul."""

from __future__ import annotations

import torch

from onnxport import importer


def _bilinear(x, py, px):
    """Sample x [N, G, Cg, H, W] at float positions py/px [N, G, K, oH, oW]; zero outside.

    Returns [N, G, Cg, K, oH, oW].
    """
    n, g, cg, h, w = x.shape
    flat = x.reshape(n, g, cg, h * w)
    y0, x0 = torch.floor(py), torch.floor(px)
    ly, lx = py - y0, px - x0
    out = 0
    for dy, wy in ((0, 1 - ly), (1, ly)):
        for dx, wx in ((0, 1 - lx), (1, lx)):
            yy, xx = y0 + dy, x0 + dx
            valid = (yy >= 0) & (yy <= h - 1) & (xx >= 0) & (xx <= w - 1)
            idx = (yy.clamp(0, h - 1) * w + xx.clamp(0, w - 1)).to(torch.int64)
            idx_shape = idx.shape
            idx = idx.reshape(n, g, 1, -1).expand(n, g, cg, idx.shape[2:].numel())
            vals = torch.gather(flat, 3, idx).reshape(n, g, cg, *idx_shape[2:])
            weight = (wy * wx * valid.to(x.dtype)).unsqueeze(2)
            out = out + vals * weight
    return out


@importer("DeformConv", since=22)
def deform_conv(ctx, x, w, offset, b=None, mask=None, *, dilations, group, kernel_shape, offset_group,
                pads, strides):
    if x.dim() != 4:
        raise ctx.error(f"DeformConv is implemented for 2-D inputs, got rank {x.dim()}")
    n, c, h, wd = x.shape
    m = w.shape[0]
    kh, kw = [int(k) for k in (kernel_shape or w.shape[2:])]
    sh, sw = [int(s) for s in (strides or [1, 1])]
    dh, dw = [int(d) for d in (dilations or [1, 1])]
    pt, pl, _, _ = [int(p) for p in (pads or [0, 0, 0, 0])]
    oh, ow = offset.shape[2], offset.shape[3]
    og = int(offset_group)
    k = kh * kw
    # base sampling grid: [K, oH, oW]
    ky = (torch.arange(kh, device=x.device) * dh).repeat_interleave(kw).reshape(k, 1, 1)
    kx = (torch.arange(kw, device=x.device) * dw).repeat(kh).reshape(k, 1, 1)
    base_y = ky + (torch.arange(oh, device=x.device) * sh - pt).reshape(1, oh, 1)
    base_x = kx + (torch.arange(ow, device=x.device) * sw - pl).reshape(1, 1, ow)
    off = offset.reshape(n, og, k, 2, oh, ow)
    py = base_y.to(x.dtype) + off[:, :, :, 0]
    px = base_x.to(x.dtype) + off[:, :, :, 1]
    cols = _bilinear(x.reshape(n, og, c // og, h, wd), py, px)  # [N, og, C/og, K, oH, oW]
    if mask is not None:
        cols = cols * mask.reshape(n, og, 1, k, oh, ow)
    cols = cols.reshape(n, group, (c // group) * k, oh * ow)
    wg = w.reshape(group, m // group, (c // group) * k)
    y = torch.einsum("gmk,ngkp->ngmp", wg, cols).reshape(n, m, oh, ow)
    if b is not None:
        y = y + b.reshape(1, -1, 1, 1)
    return y
