"""Resize's coordinate maths, framework-free: per resized axis, which source positions each
output position reads and with which weights (nearest, linear, cubic; antialias; every
coordinate transformation), and the output sizes that scales/sizes/axes/aspect policy give.

A backend applies the taps with one gather and a weighted sum per axis (or a matrix product).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence

import numpy as np


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


def source_coords(mode, y, scale, size_in, size_out, roi):
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


def axis_taps(size_in, size_out, scale, roi, *, mode, coord, nearest_mode, antialias, cubic_a, exclude_outside):
    """The taps of one resized axis, as the ONNX reference computes them.

    Per output position: source indices ``[out, n]`` (clipped: edge padding), weights
    ``[out, n]`` and the ``tf_crop_and_resize`` extrapolation mask ``[out]`` (None otherwise).
    """
    y = np.arange(size_out, dtype=np.float64)
    x, extrap = source_coords(coord, y, scale, size_in, size_out, roi)
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


@dataclasses.dataclass(frozen=True)
class ResizeSizes:
    """What Resize's inputs and attributes fix per axis of a rank-r input.

    ``axes``: the resized axes (non-negative); ``out``: every output dim; ``factors``: every
    axis' scale; ``roi``: ``[starts..., ends...]`` over every axis, or None.
    """

    axes: list[int]
    out: list[int]
    factors: list[float]
    roi: list[float] | None

    def axis_roi(self, a: int) -> tuple[float, float] | None:
        r = len(self.out)
        return None if self.roi is None else (self.roi[a], self.roi[a + r])


def resize_sizes(shape: Sequence[int], roi: np.ndarray | None, scales: np.ndarray | None,
                 sizes: np.ndarray | None, axes: Sequence[int] | None, policy: str) -> ResizeSizes:
    """Output sizes, scale factors and roi per axis of an input of static ``shape``.

    ``sizes`` wins over ``scales`` when both are non-empty; ``policy`` is
    ``keep_aspect_ratio_policy``. Raises ValueError when neither is given.
    """
    shape = [int(d) for d in shape]
    r = len(shape)
    axes = [a % r for a in axes] if axes else list(range(r))
    full_roi = None
    if roi is not None and roi.size:
        full_roi = [0.0] * r + [1.0] * r
        k = len(axes)
        for i, a in enumerate(axes):
            full_roi[a], full_roi[r + a] = float(roi[i]), float(roi[k + i])
    if sizes is not None and sizes.size:
        out = list(shape)
        for i, a in enumerate(axes):
            out[a] = int(sizes[i])
        factors = [out[i] / shape[i] for i in range(r)]
        if policy != "stretch":
            pick = min if policy == "not_larger" else max
            s = pick(factors[a] for a in axes)
            factors = [s if i in axes else 1.0 for i in range(r)]
            out = [int(s * shape[i] + 0.5) if i in axes else shape[i] for i in range(r)]
    elif scales is not None and scales.size:
        factors = [1.0] * r
        for i, a in enumerate(axes):
            factors[a] = float(scales[i])
        out = [int(math.floor(f * d)) for f, d in zip(factors, shape)]
    else:
        raise ValueError("Resize needs either scales or sizes")
    return ResizeSizes(axes, out, factors, full_roi)


@dataclasses.dataclass(frozen=True)
class AxisResize:
    """How one axis is resized: source indices ``idx`` and weights ``coeffs`` (``[out, n]``),
    the extrapolation mask (``tf_crop_and_resize``) and, for nearest mode, ``pick``: the one
    source index per output position."""

    axis: int
    idx: np.ndarray
    coeffs: np.ndarray
    extrap: np.ndarray | None

    @property
    def pick(self) -> np.ndarray:
        idx = self.idx
        return idx[np.arange(idx.shape[0]), np.argmax(self.coeffs, axis=1)] if idx.size else idx[:, 0]


def resize_plan(shape: Sequence[int], sizes: ResizeSizes, *, mode: str, coord: str, nearest_mode: str,
                antialias: int, cubic_a: float, exclude_outside: int) -> list[AxisResize]:
    """The axes that change, in order, with their taps (an axis kept as is is left out).

    Raises ValueError for an unknown mode or a ``tf_crop_and_resize`` without roi.
    """
    if mode not in ("nearest", "linear", "cubic"):
        raise ValueError(f"unknown Resize mode {mode!r}")
    plan = []
    for a in sizes.axes:
        axis_roi = sizes.axis_roi(a)
        trivial_roi = axis_roi is None or (math.isclose(axis_roi[0], 0.0) and math.isclose(axis_roi[1], 1.0))
        if math.isclose(sizes.factors[a], 1.0) and sizes.out[a] == int(shape[a]) and trivial_roi:
            continue
        if coord == "tf_crop_and_resize" and axis_roi is None:
            raise ValueError("coordinate_transformation_mode tf_crop_and_resize needs roi")
        idx, coeffs, extrap = axis_taps(
            int(shape[a]), sizes.out[a], sizes.factors[a], axis_roi, mode=mode, coord=coord,
            nearest_mode=nearest_mode, antialias=antialias, cubic_a=cubic_a, exclude_outside=exclude_outside)
        plan.append(AxisResize(a, idx, coeffs, extrap))
    return plan
