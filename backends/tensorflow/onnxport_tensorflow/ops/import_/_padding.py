"""Padding arithmetic of the convolution and pooling ops: the framework-free rules live in
:mod:`onnxport.opmath.pads` (re-exported here); the window-tap slicer indexes TensorFlow tensors."""

from __future__ import annotations

from onnxport.opmath.pads import resolve_pads, same_pads, spatial_settings, window_slices

__all__ = ["resolve_pads", "same_pads", "spatial_settings", "window_taps"]


def window_taps(xp, kernel, strides, dilations, first_axis, spatial):
    """For each kernel tap of a window op over the padded ``xp`` (spatial dims from
    ``first_axis``, sizes ``spatial``): ``(tap, the strided slice of xp that tap reads)``."""
    rank = len(xp.shape)
    for tap, spans in window_slices(spatial, kernel, strides, dilations):
        idx = [slice(None)] * rank
        for i, (b, e, s) in enumerate(spans):
            idx[first_axis + i] = slice(b, e, s)
        yield tap, xp[tuple(idx)]
