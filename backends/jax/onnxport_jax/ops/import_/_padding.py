"""Padding arithmetic of the convolution and pooling ops: the framework-free rules live in
:mod:`onnxport.opmath.pads` (re-exported here); the window-tap slicer is JAX's own."""

from __future__ import annotations

from jax import lax

from onnxport.opmath.pads import resolve_pads, same_pads, spatial_settings, window_slices

__all__ = ["resolve_pads", "same_pads", "spatial_settings", "window_taps"]


def window_taps(xp, kernel, strides, dilations, first_axis):
    """For each kernel tap of a window op over the padded ``xp`` (spatial dims from
    ``first_axis``): ``(tap, the strided slice of xp that tap reads for every output position)``."""
    nd = len(kernel)
    padded = xp.shape[first_axis:first_axis + nd]
    for tap, spans in window_slices(padded, kernel, strides, dilations):
        start, stop, step = [0] * xp.ndim, list(xp.shape), [1] * xp.ndim
        for i, (b, e, s) in enumerate(spans):
            start[first_axis + i], stop[first_axis + i], step[first_axis + i] = b, e, s
        yield tap, lax.slice(xp, start, stop, step)
