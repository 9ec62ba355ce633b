"""Resize (nearest, linear, cubic; antialias; every coordinate transformation) and Upsample.

Resize is separable: for every resized axis the source taps and their weights come from the
core's numpy maths (:mod:`onnxport.opmath.resize`, as the ONNX reference computes them) from static
shapes, then are applied with one ``tf.gather`` and a weighted sum per axis. Nearest mode
gathers the chosen tap directly, exactly, for any dtype.
"""

from __future__ import annotations

import tensorflow as tf

from onnxport import importer
from onnxport.opmath.resize import resize_plan, resize_sizes

from ._static import concrete, tensor


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
    x = tensor(x)
    shape_in = [int(d) for d in x.shape]
    is_float = x.dtype.is_floating
    work = x
    if mode != "nearest":
        work = tf.cast(x, x.dtype if is_float and x.dtype.size >= 4 else tf.float32)
    r = len(shape_in)
    for ax in plan:
        a, idx, coeffs = ax.axis, ax.idx, ax.coeffs
        if mode == "nearest":
            work = tf.gather(work, ax.pick, axis=a)
        else:
            g = tf.gather(work, idx, axis=a)  # [..., out, taps, ...]
            w = tf.constant(coeffs.reshape((1,) * a + coeffs.shape + (1,) * (r - a - 1)), work.dtype)
            work = tf.reduce_sum(g * w, axis=a + 1)
    for ax in plan:
        if ax.extrap is not None:
            shape = [1] * r
            shape[ax.axis] = ax.extrap.size
            work = tf.where(ax.extrap.reshape(shape), tf.constant(extrapolation_value, work.dtype), work)
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
