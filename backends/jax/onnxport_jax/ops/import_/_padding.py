"""Padding arithmetic of the convolution and pooling ops: the framework-free rules live in
:mod:`onnxport.pads` (re-exported here); the window-tap slicer is JAX's own."""

from __future__ import annotations

import numpy as np
from jax import lax

from onnxport.pads import resolve_pads, same_pads, spatial_settings

__all__ = ["resolve_pads", "same_pads", "spatial_settings", "window_taps"]


def window_taps(xp, kernel, strides, dilations, first_axis):
    """For each kernel tap of a window op over the padded ``xp`` (spatial dims from
    ``first_axis``): ``(tap, the strided slice of xp that tap reads for every output position)``."""
    nd = len(kernel)
    out = [(xp.shape[first_axis + i] - (kernel[i] - 1) * dilations[i] - 1) // strides[i] + 1 for i in range(nd)]
    for tap in np.ndindex(*kernel):
        start, stop, step = [0] * xp.ndim, list(xp.shape), [1] * xp.ndim
        for i in range(nd):
            a = first_axis + i
            start[a] = tap[i] * dilations[i]
            stop[a] = start[a] + (out[i] - 1) * strides[i] + 1
            step[a] = strides[i]
        yield tap, lax.slice(xp, start, stop, step)
