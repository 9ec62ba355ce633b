"""Resize (nearest, linear, cubic; every coordinate transformation, antialias, axes, aspect policy).

Resizing is separable: each resized axis is a matrix product with an (out, in) interpolation
matrix built from the axis' sizes and the attributes. The matrices depend only on shapes, so
they are built once per shape and cached; the product keeps gradients flowing to the input.
"""

from __future__ import annotations

import functools
import math

import numpy as np
import torch

from onnxport import importer


def _nearest(ratios: np.ndarray, scale: float, mode: str) -> np.ndarray:
    whole = ratios == 1.0
    if mode == "round_prefer_floor":
        right = ratios > 0.5
    elif mode == "round_prefer_ceil":
        right = ratios >= 0.5
    elif mode == "floor":
        right = np.zeros_like(ratios, dtype=bool)
    elif mode == "ceil":
        right = np.ones_like(ratios, dtype=bool)
    else:
        raise ValueError(f"unknown nearest_mode {mode!r}")
    right = right | whole
    return np.stack([~right, right], axis=-1).astype(np.float64)


def _linear(ratios: np.ndarray, scale: float, antialias: bool) -> np.ndarray:
    if not antialias:
        return np.stack([1 - ratios, ratios], axis=-1)
    scale = min(scale, 1.0)
    start = int(np.floor(-1 / scale) + 1)
    taps = np.arange(start, start + 2 - 2 * start)
    c = np.clip(1 - np.abs((taps[None, :] - ratios[:, None]) * scale), 0, 1)
    return c / c.sum(-1, keepdims=True)


def _cubic(ratios: np.ndarray, scale: float, antialias: bool, a: float) -> np.ndarray:
    def kernel(x):
        x = np.abs(x)
        near = ((a + 2) * x - (a + 3)) * x * x + 1
        far = ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
        return np.where(x <= 1, near, np.where(x < 2, far, 0.0))

    if not antialias:
        taps = np.array([-1.0, 0.0, 1.0, 2.0])
        return kernel(taps[None, :] - ratios[:, None])
    scale = min(scale, 1.0)
    start = int(np.floor(-2 / scale) + 1)
    taps = np.arange(start, 2 - start)
    c = kernel(scale * (taps[None, :] - ratios[:, None]))
    return c / c.sum(-1, keepdims=True)


def _source_coords(mode: str, out_int: int, scale: float, in_size: int, roi) -> tuple[np.ndarray, np.ndarray | None]:
    y = np.arange(out_int, dtype=np.float64)
    out = scale * in_size
    if mode == "align_corners":
        return (np.zeros(out_int) if out == 1 else y * (in_size - 1) / (out - 1)), None
    if mode == "asymmetric":
        return y / scale, None
    if mode == "tf_crop_and_resize":
        start, end = roi
        x = np.full(out_int, (end - start) * (in_size - 1) / 2) if out == 1 else y * (end - start) * (in_size - 1) / (out - 1)
        x = x + start * (in_size - 1)
        return x, (x < 0) | (x > in_size - 1)
    if mode == "pytorch_half_pixel":
        return (np.full(out_int, -0.5) if out == 1 else (y + 0.5) / scale - 0.5), None
    if mode == "half_pixel":
        return (y + 0.5) / scale - 0.5, None
    if mode == "half_pixel_symmetric":
        offset = in_size / 2 * (1 - out_int / out)
        return offset + (y + 0.5) / scale - 0.5, None
    raise ValueError(f"unknown coordinate_transformation_mode {mode!r}")


@functools.lru_cache(maxsize=256)
def _axis_matrix(in_size: int, out_int: int, scale: float, roi: tuple[float, float] | None, mode: str,
                 coord_mode: str, nearest_mode: str, antialias: bool, cubic_a: float,
                 exclude_outside: bool) -> tuple[np.ndarray, np.ndarray | None]:
    """(out, in) interpolation weights for one axis, and which outputs are extrapolated."""
    x, extrapolated = _source_coords(coord_mode, out_int, scale, in_size, roi)
    base = np.floor(x)
    ratios = np.where(x == base, 1.0, x - base)  # the pixel left of x is preferred
    if mode == "nearest":
        coeffs = _nearest(ratios, scale, nearest_mode)
    elif mode == "linear":
        coeffs = _linear(ratios, scale, antialias)
    elif mode == "cubic":
        coeffs = _cubic(ratios, scale, antialias, cubic_a)
    else:
        raise ValueError(f"unknown mode {mode!r}")
    n = coeffs.shape[-1]
    pad = int(math.ceil(n / 2))
    xp = x + pad
    p = np.floor(xp).astype(np.int64)
    frac = xp - p
    if n % 2 == 0:
        first = np.where(frac == 0, -(n // 2), -(n // 2) + 1)
    else:
        first = np.where(frac <= 0.5, -((n - 1) // 2), -((n - 1) // 2) + 1)
    idx = (p + first)[:, None] + np.arange(n)[None, :] - pad
    if exclude_outside:
        coeffs = np.where((idx < 0) | (idx >= in_size), 0.0, coeffs)
        total = coeffs.sum(-1, keepdims=True)
        coeffs = coeffs / np.where(total == 0, 1.0, total)
    weights = np.zeros((out_int, in_size), dtype=np.float64)
    rows = np.repeat(np.arange(out_int), n)
    np.add.at(weights, (rows, np.clip(idx, 0, in_size - 1).reshape(-1)), coeffs.reshape(-1))
    return weights, extrapolated


def _values(ctx, i: int, t) -> list[float] | None:
    if t is None:
        return None
    c = ctx.const(i)
    vals = np.asarray(c if c is not None else t.detach().cpu().numpy()).reshape(-1)
    return [float(v) for v in vals] if vals.size else None


@importer("Resize", since=19)
def resize(ctx, x, roi=None, scales=None, sizes=None, *, antialias, axes, coordinate_transformation_mode,
           cubic_coeff_a, exclude_outside, extrapolation_value, keep_aspect_ratio_policy, mode, nearest_mode):
    r = x.dim()
    axes = [int(a) % r for a in axes] if axes else list(range(r))
    roi_v, scale_v, size_v = _values(ctx, 1, roi), _values(ctx, 2, scales), _values(ctx, 3, sizes)
    shape = [int(s) for s in x.shape]
    full_roi = None
    if roi_v is not None:
        full_roi = [0.0] * r + [1.0] * r
        for i, a in enumerate(axes):
            full_roi[a], full_roi[r + a] = roi_v[i], roi_v[len(axes) + i]
    factors = [1.0] * r
    out = list(shape)
    if size_v is not None:
        for i, a in enumerate(axes):
            out[a] = int(size_v[i])
            factors[a] = out[a] / shape[a]
        if keep_aspect_ratio_policy != "stretch":
            pick = min if keep_aspect_ratio_policy == "not_larger" else max
            s = pick(factors[a] for a in axes)
            for a in axes:
                factors[a] = s
                out[a] = int(s * shape[a] + 0.5)
    elif scale_v is not None:
        for i, a in enumerate(axes):
            factors[a] = scale_v[i]
            out[a] = int(scale_v[i] * shape[a])
    else:
        raise ctx.error("Resize needs scales or sizes")
    if mode == "nearest" and antialias:
        raise ctx.error("antialias is not defined for mode='nearest'")

    y = x if x.is_floating_point() else x.to(torch.float64)
    for a in axes:
        axis_roi = (full_roi[a], full_roi[r + a]) if full_roi is not None else None
        if math.isclose(factors[a], 1.0) and out[a] == y.shape[a] and (
                axis_roi is None or (math.isclose(axis_roi[0], 0.0) and math.isclose(axis_roi[1], 1.0))):
            continue
        weights, extrapolated = _axis_matrix(
            int(y.shape[a]), out[a], float(factors[a]), axis_roi, mode, coordinate_transformation_mode,
            nearest_mode, bool(antialias), float(cubic_coeff_a), bool(exclude_outside))
        w = torch.from_numpy(weights).to(dtype=y.dtype, device=y.device)
        y = torch.movedim(torch.tensordot(y, w, dims=([a], [1])), -1, a)
        if extrapolated is not None and extrapolated.any():
            mask = torch.from_numpy(extrapolated).to(y.device).reshape([-1 if i == a else 1 for i in range(r)])
            y = torch.where(mask, torch.tensor(extrapolation_value, dtype=y.dtype, device=y.device), y)
    if not x.is_floating_point():
        info = torch.iinfo(x.dtype)
        y = y.round().clamp(info.min, info.max).to(x.dtype)
    return y


@importer("Upsample", since=10)
def upsample(ctx, x, scales, *, mode):
    """Upsample-10 (deprecated): Resize with asymmetric coordinates and floor rounding."""
    return resize(ctx, x, None, scales, None, antialias=0, axes=None, coordinate_transformation_mode="asymmetric",
                  cubic_coeff_a=-0.75, exclude_outside=0, extrapolation_value=0.0, keep_aspect_ratio_policy="stretch",
                  mode=mode, nearest_mode="floor")
