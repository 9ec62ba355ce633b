"""Resize (nearest, linear, cubic; antialias; every coordinate transformation) and Upsample.

Resize is separable: for every resized axis the source taps and their weights are computed in
numpy from static shapes (as the ONNX reference does), then applied with one ``tf.gather`` and a
weighted sum per axis. Nearest mode gathers the chosen tap directly, exactly, for any dtype.
"""

from __future__ import annotations

import math

import numpy as np
import tensorflow as tf

from onnxport import importer

from ._static import concrete, tensor


def _nearest(ratio, mode):
    if ratio == 1.0:  # integer source coordinate
        return np.array([0.0, 1.0])
    take_hi = {"round_prefer_floor": ratio > 0.5, "round_prefer_ceil": ratio >= 0.5,
               "floor": False, "ceil": True}[mode]
    return np.array([0.0, 1.0]) if take_hi else np.array([1.0, 0.0])


def _linear(ratio, scale, antialias):
    if not antialias:
        return np.array([1 - ratio, ratio])
    scale = min(scale, 1.0)
    start = int(np.floor(-1 / scale) + 1)
    args = (np.arange(start, 2 - start) - ratio) * scale
    c = np.clip(1 - np.abs(args), 0, 1)
    return c / c.sum()


def _cubic(ratio, scale, antialias, a):
    def k(x):
        x = abs(x)
        if x <= 1:
            return (a + 2) * x ** 3 - (a + 3) * x ** 2 + 1
        if x < 2:
            return a * x ** 3 - 5 * a * x ** 2 + 8 * a * x - 4 * a
        return 0.0

    if not antialias:
        return np.array([k(ratio + 1), k(ratio), k(1 - ratio), k(2 - ratio)])
    scale = min(scale, 1.0)
    start = int(np.floor(-2 / scale) + 1)
    c = np.array([k(scale * (i - ratio)) for i in range(start, 2 - start)])
    return c / c.sum()


def _source(mode, y, scale, size_in, size_out, roi):
    """Source coordinates of output positions ``y`` and the tf_crop_and_resize extrapolation mask."""
    width = scale * size_in
    if mode == "align_corners":
        return (np.zeros_like(y) if width == 1 else y * (size_in - 1) / (width - 1)), None
    if mode == "asymmetric":
        return y / scale, None
    if mode == "tf_crop_and_resize":
        lo, hi = roi
        x = (np.full_like(y, (hi - lo) * (size_in - 1) / 2) if width == 1
             else y * (hi - lo) * (size_in - 1) / (width - 1))
        x = x + lo * (size_in - 1)
        return x, (x < 0) | (x > size_in - 1)
    if mode == "pytorch_half_pixel":
        return (np.full_like(y, -0.5) if width == 1 else (y + 0.5) / scale - 0.5), None
    if mode == "half_pixel":
        return (y + 0.5) / scale - 0.5, None
    if mode == "half_pixel_symmetric":
        offset = size_in / 2 * (1 - size_out / width)
        return offset + (y + 0.5) / scale - 0.5, None
    raise ValueError(f"unknown coordinate_transformation_mode {mode!r}")


def _taps(size_in, size_out, scale, roi, *, mode, coord, nearest_mode, antialias, cubic_a, exclude_outside):
    """Per output position: source indices [out, n], weights [out, n], extrapolation mask."""
    y = np.arange(size_out, dtype=np.float64)
    x, extrap = _source(coord, y, scale, size_in, size_out, roi)
    xi = np.floor(x)
    ratios = np.where(x == xi, 1.0, x - xi)
    if mode == "nearest":
        coeffs = np.stack([_nearest(r, nearest_mode) for r in ratios]) if size_out else np.zeros((0, 2))
    elif mode == "linear":
        coeffs = np.stack([_linear(r, scale, antialias) for r in ratios]) if size_out else np.zeros((0, 2))
    else:
        coeffs = np.stack([_cubic(r, scale, antialias, cubic_a) for r in ratios]) if size_out else np.zeros((0, 4))
    n = coeffs.shape[1]
    # the n nearest source positions, smaller ones first on ties (edge-padded input)
    if n % 2 == 0:
        start = np.where(x == xi, xi - n // 2, xi - n // 2 + 1)
    else:
        frac = x - xi
        start = np.where(frac <= 0.5, xi - (n - 1) // 2, xi - (n - 1) // 2 + 1)
    idx = start.astype(np.int64)[:, None] + np.arange(n)[None, :]
    if exclude_outside:
        coeffs = np.where((idx < 0) | (idx >= size_in), 0.0, coeffs)
        total = coeffs.sum(axis=-1, keepdims=True)
        coeffs = coeffs / np.where(total == 0, 1.0, total)
    return np.clip(idx, 0, size_in - 1), coeffs, extrap


def _sizes(ctx, x, roi, scales, sizes, axes, policy):
    """Output sizes, scale factors and roi per axis of ``x`` (full rank)."""
    r = len(x.shape)
    axes = [a % r for a in axes] if axes else list(range(r))
    scale_v = concrete(ctx, 2, scales, "scales")
    size_v = concrete(ctx, 3, sizes, "sizes")
    roi_v = concrete(ctx, 1, roi, "roi")
    full_roi = None
    if roi_v is not None and roi_v.size:
        full_roi = [0.0] * r + [1.0] * r
        k = len(axes)
        for i, a in enumerate(axes):
            full_roi[a], full_roi[r + a] = float(roi_v[i]), float(roi_v[k + i])
    if size_v is not None and size_v.size:
        out = [int(d) for d in x.shape]
        for i, a in enumerate(axes):
            out[a] = int(size_v[i])
        factors = [out[i] / int(x.shape[i]) for i in range(r)]
        if policy != "stretch":
            pick = min if policy == "not_larger" else max
            s = pick(factors[a] for a in axes)
            factors = [s if i in axes else 1.0 for i in range(r)]
            out = [int(s * int(x.shape[i]) + 0.5) if i in axes else int(x.shape[i]) for i in range(r)]
    elif scale_v is not None and scale_v.size:
        factors = [1.0] * r
        for i, a in enumerate(axes):
            factors[a] = float(scale_v[i])
        out = [int(math.floor(f * int(d))) for f, d in zip(factors, x.shape)]
    else:
        raise ctx.error("Resize needs either scales or sizes")
    return axes, out, factors, full_roi


@importer("Resize", since=19)
def resize(ctx, x, roi=None, scales=None, sizes=None, *, antialias, axes, coordinate_transformation_mode,
           cubic_coeff_a, exclude_outside, extrapolation_value, keep_aspect_ratio_policy, mode, nearest_mode):
    if mode not in ("nearest", "linear", "cubic"):
        raise ctx.error(f"unknown Resize mode {mode!r}")
    axes_, out, factors, full_roi = _sizes(ctx, x, roi, scales, sizes, axes, keep_aspect_ratio_policy)
    x = tensor(x)
    shape_in = [int(d) for d in x.shape]
    is_float = x.dtype.is_floating
    work = x
    if mode != "nearest":
        work = tf.cast(x, x.dtype if is_float and x.dtype.size >= 4 else tf.float32)
    masks = []
    r = len(shape_in)
    for a in axes_:
        axis_roi = None if full_roi is None else (full_roi[a], full_roi[a + r])
        trivial_roi = axis_roi is None or (math.isclose(axis_roi[0], 0.0) and math.isclose(axis_roi[1], 1.0))
        if math.isclose(factors[a], 1.0) and out[a] == shape_in[a] and trivial_roi:
            continue
        if coordinate_transformation_mode == "tf_crop_and_resize" and axis_roi is None:
            raise ctx.error("coordinate_transformation_mode tf_crop_and_resize needs roi")
        idx, coeffs, extrap = _taps(
            shape_in[a], out[a], factors[a], axis_roi, mode=mode, coord=coordinate_transformation_mode,
            nearest_mode=nearest_mode, antialias=antialias, cubic_a=cubic_coeff_a,
            exclude_outside=exclude_outside)
        if mode == "nearest":
            pick = idx[np.arange(idx.shape[0]), np.argmax(coeffs, axis=1)] if idx.size else idx[:, 0]
            work = tf.gather(work, pick, axis=a)
        else:
            g = tf.gather(work, idx, axis=a)  # [..., out, taps, ...]
            w = tf.constant(coeffs.reshape((1,) * a + coeffs.shape + (1,) * (r - a - 1)), work.dtype)
            work = tf.reduce_sum(g * w, axis=a + 1)
        if extrap is not None:
            masks.append((a, extrap))
    for a, extrap in masks:
        shape = [1] * r
        shape[a] = extrap.size
        work = tf.where(extrap.reshape(shape), tf.constant(extrapolation_value, work.dtype), work)
    if work.dtype != x.dtype:
        if not is_float:  # saturating round for integer images
            work = tf.clip_by_value(tf.round(work), x.dtype.min, x.dtype.max)
        work = tf.cast(work, x.dtype)
    return work


@importer("Upsample", since=10)
def upsample(ctx, x, scales, *, mode):
    """Upsample-10 (deprecated): Resize with asymmetric coordinates and floor rounding."""
    return resize(ctx, x, None, scales, None, antialias=0, axes=None,
                  coordinate_transformation_mode="asymmetric", cubic_coeff_a=-0.75, exclude_outside=0,
                  extrapolation_value=0.0, keep_aspect_ratio_policy="stretch", mode=mode,
                  nearest_mode="floor")
