"""RoiAlign (bilinear samples per bin, averaged or maxed) and MaxRoiPool, vectorized over ROIs.

With ``sampling_ratio == 0`` RoiAlign's sample grid adapts to each ROI's size: the largest grid must
be known, so the ROIs must then be concrete (constants, or a call outside ``jax.jit``); smaller grids
are masked. MaxRoiPool's bins are rectangular masks, maxed along one axis at a time.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from onnxport import importer

#: testkit tolerances beyond the float32 default (rtol 1e-5, atol 1e-6): op -> dtype -> (rtol, atol, reason)
TEST_TOLERANCES = {
    "RoiAlign": {"float32": (2e-4, 1e-4, "the official node case's expected values are written to 4 decimals (measured |diff| 5e-5..8e-5)")},
}


def _wide(dtype):
    return jnp.float64 if dtype == jnp.float64 else jnp.float32


def _axis_samples(start, size, bins: int, grid, most: int, limit: int):
    """Per bin and sample along one axis [bins, most]: low/high indices, weights, validity."""
    step = size / bins
    b = jnp.arange(bins)[:, None]
    k = jnp.arange(most)[None, :]
    pos = start + b * step + (k + 0.5) * step / grid
    valid = (pos >= -1.0) & (pos <= limit) & (k < grid)
    pos = jnp.maximum(pos, 0.0)
    low = jnp.floor(pos).astype(jnp.int32)
    at_end = low >= limit - 1
    low = jnp.where(at_end, limit - 1, low)
    high = jnp.where(at_end, low, low + 1)
    pos = jnp.where(at_end, low.astype(pos.dtype), pos)
    frac = pos - low
    return low, high, 1 - frac, frac, valid, k < grid


@importer("RoiAlign", since=22)
def roi_align(ctx, x, rois, batch_indices, *, coordinate_transformation_mode, mode, output_height,
              output_width, sampling_ratio, spatial_scale):
    """[R, C, output_height, output_width] from ``x`` [N, C, H, W] and ``rois`` [R, 4] (x1, y1, x2, y2)."""
    if mode not in ("avg", "max"):
        raise ctx.error(f"unknown RoiAlign mode {mode!r} (one of 'avg', 'max')")
    if coordinate_transformation_mode not in ("half_pixel", "output_half_pixel"):
        raise ctx.error(f"unknown coordinate_transformation_mode {coordinate_transformation_mode!r}")
    oh, ow = int(output_height), int(output_width)
    h, w = x.shape[2], x.shape[3]
    wide = _wide(x.dtype)
    offset = 0.5 if coordinate_transformation_mode == "half_pixel" else 0.0
    boxes = jnp.asarray(rois).astype(wide) * spatial_scale - offset
    x1, y1, x2, y2 = (boxes[:, i] for i in range(4))
    rw, rh = x2 - x1, y2 - y1
    if offset == 0.0:  # the legacy mode keeps ROIs at least one pixel wide
        rw, rh = jnp.maximum(rw, 1.0), jnp.maximum(rh, 1.0)
    if sampling_ratio > 0:
        gh = gw = jnp.full(rh.shape, int(sampling_ratio))
        most_h = most_w = int(sampling_ratio)
    else:  # adaptive grids: ceil(roi size / bins), their maximum fixes the sample array's size
        gh, gw = jnp.ceil(rh / oh).astype(jnp.int32), jnp.ceil(rw / ow).astype(jnp.int32)
        sizes = ctx.concrete(jnp.stack([gh, gw]), "RoiAlign's adaptive sampling grid (sampling_ratio=0)")
        most_h, most_w = (max(int(sizes[i].max(initial=0)), 1) for i in range(2))
    img_dt = x.dtype

    def one(img, ys, yl, xs, xl, gy, gx):
        yl_, yh_, wyl, wyh, vy, py = _axis_samples(ys, yl, oh, gy, most_h, h)
        xl_, xh_, wxl, wxh, vx, px = _axis_samples(xs, xl, ow, gx, most_w, w)
        valid = vy[:, :, None, None] & vx[None, None]  # [oh, G, ow, G]
        terms = []
        for yi, wy in ((yl_, wyl), (yh_, wyh)):
            for xi, wx in ((xl_, wxl), (xh_, wxh)):
                weight = jnp.where(valid, wy[:, :, None, None] * wx[None, None], 0).astype(img_dt)
                terms.append(img[:, yi[:, :, None, None], xi[None, None]] * weight)  # [C, oh, G, ow, G]
        real = py[:, :, None, None] & px[None, None]  # samples inside this ROI's own grid
        if mode == "avg":
            total = jnp.sum(jnp.where(real, sum(terms), 0).astype(wide), axis=(2, 4))
            return (total / (gy * gx).astype(wide)).astype(img_dt)
        best = jnp.where(real, jnp.max(jnp.stack(terms), axis=0), -jnp.inf)
        return jnp.max(best, axis=(2, 4)).astype(img_dt)

    imgs = jnp.asarray(x)[jnp.asarray(batch_indices).astype(jnp.int32)]  # [R, C, H, W]
    return jax.vmap(one)(imgs, y1, rh, x1, rw, gh, gw)


def _round(v):
    """C ``round``: halves away from zero."""
    return jnp.sign(v) * jnp.floor(jnp.abs(v) + 0.5)


def _bin_mask(start, length, bins: int, limit: int):
    """[bins, limit] bool: which pixels each of ``bins`` equal bins over [start, start + length) covers."""
    size = length / bins
    p = jnp.arange(bins)
    lo = jnp.clip(jnp.floor(p * size) + start, 0, limit)
    hi = jnp.clip(jnp.ceil((p + 1) * size) + start, 0, limit)
    i = jnp.arange(limit)[None, :]
    return (i >= lo[:, None]) & (i < hi[:, None])


@importer("MaxRoiPool", since=22)  # declared cases: the testkit's semantic_cases
def max_roi_pool(ctx, x, rois, *, pooled_shape, spatial_scale):
    """[R, C, ph, pw]: the max of each ROI bin (``rois`` [R, 5] = batch, x1, y1, x2, y2); empty bins 0."""
    ph, pw = int(pooled_shape[0]), int(pooled_shape[1])
    h, w = x.shape[2], x.shape[3]
    r = jnp.asarray(rois).astype(_wide(x.dtype))
    sx, sy = _round(r[:, 1] * spatial_scale), _round(r[:, 2] * spatial_scale)
    ex, ey = _round(r[:, 3] * spatial_scale), _round(r[:, 4] * spatial_scale)

    def one(img, sx, sy, ex, ey):
        my = _bin_mask(sy, jnp.maximum(ey - sy + 1, 1), ph, h)  # [ph, H]
        mx = _bin_mask(sx, jnp.maximum(ex - sx + 1, 1), pw, w)  # [pw, W]
        neg = jnp.asarray(-jnp.inf, img.dtype)
        cols = jnp.max(jnp.where(mx[None, None], img[:, :, None, :], neg), axis=-1)  # [C, H, pw]
        out = jnp.max(jnp.where(my[None, :, None, :], jnp.swapaxes(cols, 1, 2)[:, None], neg), axis=-1)
        empty = ~(jnp.any(my, axis=1)[:, None] & jnp.any(mx, axis=1)[None, :])  # [ph, pw]
        return jnp.where(empty, jnp.zeros((), img.dtype), out)

    imgs = jnp.asarray(x)[r[:, 0].astype(jnp.int32)]
    return jax.vmap(one)(imgs, sx, sy, ex, ey)


