"""Resize (nearest, linear, cubic; antialias; every coordinate transformation) and Upsample.

Resize is separable: for every resized axis the source taps and their weights come from the
core's numpy maths (:mod:`onnxport.opmath.resize`, as the ONNX reference computes them) from static
shapes, then are applied with one gather and a weighted sum per axis. Nearest mode gathers the
chosen tap directly, exactly, for any dtype.
"""

from __future__ import annotations

import numpy as np

from onnxport import importer
from onnxport.opmath.resize import resize_plan, resize_sizes

from ._static import concrete, xp


def _plan(ctx, x, roi, scales, sizes, *, axes, policy, **how):
    """The per-axis taps, from static inputs; a bad combination is an error naming the node."""
    scale_v = concrete(ctx, 2, scales, "scales")  # first: a runtime value is data-dependent
    size_v = concrete(ctx, 3, sizes, "sizes")
    roi_v = concrete(ctx, 1, roi, "roi")
    shape = [int(d) for d in x.shape]
    with ctx.raising():
        return resize_plan(shape, resize_sizes(shape, roi_v, scale_v, size_v, axes, policy), **how)


@importer("Resize", since=19)
def resize(ctx, x, roi=None, scales=None, sizes=None, *, antialias, axes, coordinate_transformation_mode,
           cubic_coeff_a, exclude_outside, extrapolation_value, keep_aspect_ratio_policy, mode, nearest_mode):
    plan = _plan(ctx, x, roi, scales, sizes, axes=axes, policy=keep_aspect_ratio_policy, mode=mode,
                 coord=coordinate_transformation_mode, nearest_mode=nearest_mode, antialias=antialias,
                 cubic_a=cubic_coeff_a, exclude_outside=exclude_outside)
    m = xp(x)
    is_float = np.dtype(x.dtype).kind == "f" or np.dtype(x.dtype).name == "bfloat16"
    work = x
    if mode != "nearest":
        cdt = x.dtype if is_float and np.dtype(x.dtype).itemsize >= 4 else np.float32
        work = x.astype(cdt)
    r = x.ndim
    for ax in plan:
        a, idx, coeffs = ax.axis, ax.idx, ax.coeffs
        if mode == "nearest":
            work = m.take(work, ax.pick, axis=a)
        else:
            g = m.take(work, idx.reshape(-1), axis=a)
            g = g.reshape(work.shape[:a] + idx.shape + work.shape[a + 1:])
            w = coeffs.astype(np.dtype(work.dtype)).reshape((1,) * a + coeffs.shape + (1,) * (r - a - 1))
            work = (g * w).sum(axis=a + 1)
    for ax in plan:
        if ax.extrap is not None:
            shape = [1] * r
            shape[ax.axis] = ax.extrap.size
            work = m.where(ax.extrap.reshape(shape), np.asarray(extrapolation_value, np.dtype(work.dtype)), work)
    if work.dtype != x.dtype:
        if not is_float:  # saturating round for integer images
            info = np.iinfo(np.dtype(x.dtype))
            work = m.clip(m.round(work), info.min, info.max)
        work = work.astype(x.dtype)
    return work


@importer("Upsample", since=10)
def upsample(ctx, x, scales, *, mode):
    """Upsample-10 (deprecated): Resize with asymmetric coordinates and floor rounding."""
    return resize(ctx, x, None, scales, None, antialias=0, axes=None,
                  coordinate_transformation_mode="asymmetric", cubic_coeff_a=-0.75, exclude_outside=0,
                  extrapolation_value=0.0, keep_aspect_ratio_policy="stretch", mode=mode,
                  nearest_mode="floor")
