"""RoiAlign (bilinear samples per bin, averaged or maxed) and MaxRoiPool, vectorized over ROIs.

Both gather each ROI's image once and sample it with row then column gathers (``batch_dims=1``),
so the batch and ROI counts may be symbolic; the image height and width must be static. With
``sampling_ratio == 0`` RoiAlign's sample grid adapts to each ROI's size: the largest grid sizes
the sample arrays, so the ROIs must then be concrete (constants, or an eager call); smaller grids
are masked.
"""

from __future__ import annotations

import numpy as np
import tensorflow as tf

from onnxport import importer

from ._static import concrete

#: testkit tolerances beyond the float32 default (rtol 1e-5, atol 1e-6): op -> dtype -> (rtol, atol, reason)
TEST_TOLERANCES = {
    "RoiAlign": {"float32": (2e-4, 1e-4, "the official node case's expected values are written to 4 decimals "
                                         "(measured |diff| 5e-5..8e-5)")},
}


def _wide(dtype: tf.DType) -> tf.DType:
    return tf.float64 if dtype == tf.float64 else tf.float32


def _static_hw(ctx, x) -> tuple[int, int]:
    h, w = x.shape[2], x.shape[3]
    if h is None or w is None:
        raise ctx.error(f"{ctx.op_type} needs a static image height and width, got shape {x.shape}")
    return int(h), int(w)


def _axis_samples(start, size, bins: int, grid, most: int, limit: int):
    """Samples of every ROI's bins along one axis, flattened to [R, bins * most]: low and high
    indices, their weights (zero outside the image), and which samples lie in the ROI's own grid."""
    dt = start.dtype
    step = (size / bins)[:, None, None]
    b = tf.range(bins, dtype=dt)[None, :, None]
    k = tf.range(most, dtype=dt)[None, None, :]
    g = tf.cast(grid, dt)[:, None, None]
    pos = start[:, None, None] + b * step + (k + 0.5) * step / g
    real = tf.broadcast_to(k < g, tf.shape(pos))
    valid = (pos >= -1.0) & (pos <= limit) & real
    pos = tf.maximum(pos, 0.0)
    low = tf.floor(pos)
    at_end = low >= limit - 1
    low = tf.where(at_end, tf.cast(limit - 1, dt), low)
    high = tf.where(at_end, low, low + 1)
    pos = tf.where(at_end, low, pos)
    frac = pos - low
    zero = tf.zeros_like(frac)
    flat = [tf.reshape(t, [tf.shape(t)[0], bins * most]) for t in (
        low, high, tf.where(valid, 1 - frac, zero), tf.where(valid, frac, zero), real)]
    lo, hi, w_lo, w_hi, real = flat
    return tf.cast(lo, tf.int32), tf.cast(hi, tf.int32), w_lo, w_hi, real


@importer("RoiAlign", since=22)
def roi_align(ctx, x, rois, batch_indices, *, coordinate_transformation_mode, mode, output_height,
              output_width, sampling_ratio, spatial_scale):
    """[R, C, output_height, output_width] from ``x`` [N, C, H, W] and ``rois`` [R, 4] (x1, y1, x2, y2)."""
    if mode not in ("avg", "max"):
        raise ctx.error(f"unknown RoiAlign mode {mode!r} (one of 'avg', 'max')")
    if coordinate_transformation_mode not in ("half_pixel", "output_half_pixel"):
        raise ctx.error(f"unknown coordinate_transformation_mode {coordinate_transformation_mode!r}")
    x = tf.convert_to_tensor(x)
    oh, ow = int(output_height), int(output_width)
    h, w = _static_hw(ctx, x)
    wide = _wide(x.dtype)
    offset = 0.5 if coordinate_transformation_mode == "half_pixel" else 0.0
    boxes = tf.cast(rois, wide) * tf.cast(spatial_scale, wide) - offset
    x1, y1, x2, y2 = (boxes[:, i] for i in range(4))
    rw, rh = x2 - x1, y2 - y1
    if offset == 0.0:  # the legacy mode keeps ROIs at least one pixel wide
        rw, rh = tf.maximum(rw, 1.0), tf.maximum(rh, 1.0)
    if sampling_ratio > 0:
        most_h = most_w = int(sampling_ratio)
        gh = gw = tf.fill(tf.shape(rh), int(sampling_ratio))
    else:  # adaptive grids: ceil(roi size / bins); their maximum fixes the sample arrays' size
        box = concrete(ctx, 1, rois, "RoiAlign's adaptive sampling grid (sampling_ratio=0)")
        box = np.asarray(box, np.float64) * float(spatial_scale) - offset
        sh, sw = box[:, 3] - box[:, 1], box[:, 2] - box[:, 0]
        if offset == 0.0:
            sh, sw = np.maximum(sh, 1.0), np.maximum(sw, 1.0)
        most_h = max(int(np.ceil(sh / oh).max(initial=0)), 1)
        most_w = max(int(np.ceil(sw / ow).max(initial=0)), 1)
        gh, gw = tf.cast(tf.math.ceil(rh / oh), tf.int32), tf.cast(tf.math.ceil(rw / ow), tf.int32)
    yl, yh, wyl, wyh, ry = _axis_samples(y1, rh, oh, gh, most_h, h)
    xl, xh, wxl, wxh, rx = _axis_samples(x1, rw, ow, gw, most_w, w)
    imgs = tf.cast(tf.gather(x, tf.cast(batch_indices, tf.int32)), wide)  # [R, C, H, W]
    terms = []
    for yi, wy in ((yl, wyl), (yh, wyh)):
        rows = tf.gather(imgs, yi, axis=2, batch_dims=1)  # [R, C, oh*Gh, W]
        for xi, wx in ((xl, wxl), (xh, wxh)):
            vals = tf.gather(rows, xi, axis=3, batch_dims=1)  # [R, C, oh*Gh, ow*Gw]
            terms.append(vals * (wy[:, None, :, None] * wx[:, None, None, :]))
    real = ry[:, None, :, None] & rx[:, None, None, :]
    c = x.shape[1] if x.shape[1] is not None else tf.shape(x)[1]
    grid = [-1, c, oh, most_h, ow, most_w]
    if mode == "avg":
        total = tf.reshape(tf.where(real, tf.add_n(terms), 0.0), grid)
        count = tf.cast(gh * gw, wide)[:, None, None, None]
        y = tf.reduce_sum(total, axis=[3, 5]) / count
    else:
        best = tf.reshape(tf.where(real, tf.reduce_max(tf.stack(terms), axis=0), -np.inf), grid)
        y = tf.reduce_max(best, axis=[3, 5])
    return tf.cast(y, x.dtype)


def _round(v):
    """C ``round``: halves away from zero."""
    return tf.sign(v) * tf.floor(tf.abs(v) + 0.5)


def _bin_mask(start, length, bins: int, limit: int):
    """[R, bins, limit] bool: which pixels each of ``bins`` equal bins over [start, start + length) covers."""
    dt = start.dtype
    size = (length / bins)[:, None]
    p = tf.range(bins, dtype=dt)[None, :]
    lo = tf.clip_by_value(tf.floor(p * size) + start[:, None], 0, limit)
    hi = tf.clip_by_value(tf.math.ceil((p + 1) * size) + start[:, None], 0, limit)
    i = tf.range(limit, dtype=dt)[None, None, :]
    return (i >= lo[:, :, None]) & (i < hi[:, :, None])


@importer("MaxRoiPool", since=22)  # declared cases: the testkit's semantic_cases
def max_roi_pool(ctx, x, rois, *, pooled_shape, spatial_scale):
    """[R, C, ph, pw]: the max of each ROI bin (``rois`` [R, 5] = batch, x1, y1, x2, y2); empty bins 0."""
    x = tf.convert_to_tensor(x)
    ph, pw = int(pooled_shape[0]), int(pooled_shape[1])
    h, w = _static_hw(ctx, x)
    r = tf.cast(rois, _wide(x.dtype))
    scale = tf.cast(spatial_scale, r.dtype)
    sx, sy = _round(r[:, 1] * scale), _round(r[:, 2] * scale)
    ex, ey = _round(r[:, 3] * scale), _round(r[:, 4] * scale)
    my = _bin_mask(sy, tf.maximum(ey - sy + 1, 1), ph, h)  # [R, ph, H]
    mx = _bin_mask(sx, tf.maximum(ex - sx + 1, 1), pw, w)  # [R, pw, W]
    imgs = tf.gather(x, tf.cast(r[:, 0], tf.int32))  # [R, C, H, W]
    neg = tf.constant(-np.inf, x.dtype)
    cols = tf.reduce_max(tf.where(mx[:, None, None], imgs[:, :, :, None, :], neg), axis=-1)  # [R, C, H, pw]
    cols = tf.transpose(cols, [0, 1, 3, 2])[:, :, None]  # [R, C, 1, pw, H]
    out = tf.reduce_max(tf.where(my[:, None, :, None, :], cols, neg), axis=-1)  # [R, C, ph, pw]
    empty = ~(tf.reduce_any(my, axis=2)[:, :, None] & tf.reduce_any(mx, axis=2)[:, None, :])  # [R, ph, pw]
    return tf.where(empty[:, None], tf.zeros((), x.dtype), out)
