"""DeformConv (2-D): bilinear samples at offset kernel taps, then a grouped contraction."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
from jax import lax

from onnxport import importer

from ._padding import spatial_settings
from .conv import add_bias


def _bilinear(img, py, px):
    """Sample ``img`` [C, H, W] at float positions [..] with zeros outside; returns [C, ..]."""
    h, w = img.shape[1], img.shape[2]
    y0, x0 = jnp.floor(py), jnp.floor(px)
    out = 0
    for dy in (0, 1):
        for dx in (0, 1):
            yy, xx = y0 + dy, x0 + dx
            wt = (1 - jnp.abs(py - yy)) * (1 - jnp.abs(px - xx))
            valid = (yy >= 0) & (yy <= h - 1) & (xx >= 0) & (xx <= w - 1)
            yi = jnp.clip(yy, 0, h - 1).astype(jnp.int32)
            xi = jnp.clip(xx, 0, w - 1).astype(jnp.int32)
            out = out + img[:, yi, xi] * jnp.where(valid, wt, 0).astype(img.dtype)
    return out


@importer("DeformConv", since=22)
def deform_conv(ctx, x, w, offset, b=None, mask=None, *, dilations, group, kernel_shape, offset_group,
                pads, strides):
    """2-D deformable convolution: bilinear samples at offset kernel taps, then a grouped matmul."""
    if w.ndim != 4:
        raise ctx.error(f"only 2-D DeformConv is supported, got a {w.ndim - 2}-D kernel")
    kernel, strides, dilations = spatial_settings(2, kernel_shape or w.shape[2:], strides, dilations)
    pads = [int(p) for p in (pads or [0] * 4)]
    n, c, _, _ = x.shape
    kh, kw = kernel
    oh, ow = offset.shape[2], offset.shape[3]
    og = offset_group or 1
    k = kh * kw
    off = jnp.reshape(offset, (n, og, k, 2, oh, ow))
    m = jnp.ones((n, og, k, oh, ow), x.dtype) if mask is None else jnp.reshape(mask, (n, og, k, oh, ow))
    base_y = (np.arange(oh) * strides[0] - pads[0])[:, None] + np.zeros((1, ow))
    base_x = (np.arange(ow) * strides[1] - pads[1])[None, :] + np.zeros((oh, 1))
    tap_y = np.repeat(np.arange(kh) * dilations[0], kw)
    tap_x = np.tile(np.arange(kw) * dilations[1], kh)
    py = (base_y[None] + tap_y[:, None, None]).astype(np.float64)
    px = (base_x[None] + tap_x[:, None, None]).astype(np.float64)
    cpg = c // og
    cols = []
    for i in range(n):
        groups = []
        for g in range(og):
            img = x[i, g * cpg:(g + 1) * cpg]
            sy = (py + off[i, g, :, 0]).astype(x.dtype)
            sx = (px + off[i, g, :, 1]).astype(x.dtype)
            groups.append(_bilinear(img, sy, sx) * m[i, g][None])  # [cpg, k, oh, ow]
        cols.append(jnp.concatenate(groups, axis=0))
    col = jnp.stack(cols)  # [N, C, K, OH, OW]
    oc = w.shape[0]
    col = jnp.reshape(col, (n, group, c // group, k, oh, ow))
    wg = jnp.reshape(w, (group, oc // group, c // group, k))
    y = jnp.einsum("ngckhw,gock->ngohw", col, wg, precision=lax.Precision.HIGHEST)
    return add_bias(jnp.reshape(y, (n, oc, oh, ow)), b)
