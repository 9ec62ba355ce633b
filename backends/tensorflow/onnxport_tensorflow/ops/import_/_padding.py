"""Padding arithmetic shared by the convolution and pooling ops (ONNX auto_pad rules)."""

from __future__ import annotations

import numpy as np

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


def window_taps(xp, kernel, strides, dilations, first_axis, spatial):
    """For each kernel tap of a window op over the padded ``xp`` (spatial dims from
    ``first_axis``, sizes ``spatial``): ``(tap, the strided slice of xp that tap reads)``."""
    nd = len(kernel)
    out = [(spatial[i] - (kernel[i] - 1) * dilations[i] - 1) // strides[i] + 1 for i in range(nd)]
    rank = len(xp.shape)
    for tap in np.ndindex(*kernel):
        idx = [slice(None)] * rank
        for i in range(nd):
            start = tap[i] * dilations[i]
            idx[first_axis + i] = slice(start, start + (out[i] - 1) * strides[i] + 1, strides[i])
        yield tap, xp[tuple(idx)]
