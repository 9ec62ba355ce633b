"""Padding arithmetic shared by the convolution and pooling ops (ONNX auto_pad rules)."""

from __future__ import annotations

import numpy as np
from jax import lax

from onnxport.pads import same_pads

__all__ = ["resolve_pads", "same_pads", "spatial_settings", "window_taps"]


def resolve_pads(auto_pad: str, pads, spatial, kernel, strides, dilations) -> list[int]:
    """The explicit ``[begin..., end...]`` pads an ONNX conv/pool node uses."""
    nd = len(kernel)
    if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        return same_pads(spatial, kernel, strides, dilations, auto_pad)
    if auto_pad == "VALID" or not pads:
        return [0] * (2 * nd)
    return [int(p) for p in pads]


def spatial_settings(nd: int, kernel, strides, dilations):
    """Kernel, strides and dilations as int lists with ONNX defaults filled in."""
    return ([int(k) for k in kernel], [int(s) for s in (strides or [1] * nd)],
            [int(d) for d in (dilations or [1] * nd)])


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
