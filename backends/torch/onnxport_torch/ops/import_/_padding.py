"""Padding helpers shared by Conv, ConvTranspose and the pooling ops."""

from __future__ import annotations

import math


def explicit_pads(pads, nd: int) -> list[int]:
    return list(pads) if pads else [0] * (2 * nd)


def same_pads(spatial, kernel, strides, dilations, auto_pad: str) -> list[int]:
    """ONNX SAME_UPPER/SAME_LOWER pads as [begin..., end...]."""
    begins, ends = [], []
    for size, k, s, d in zip(spatial, kernel, strides, dilations):
        size = int(size)
        out = math.ceil(size / s)
        total = max((out - 1) * s + (k - 1) * d + 1 - size, 0)
        small, big = total // 2, total - total // 2
        if auto_pad == "SAME_UPPER":
            begins.append(small)
            ends.append(big)
        else:
            begins.append(big)
            ends.append(small)
    return begins + ends


def split_pads(pads, nd: int):
    """ONNX pads -> (symmetric per-dim padding, extra F.pad list or None)."""
    begins, ends = pads[:nd], pads[nd:]
    if begins == ends:
        return list(begins), None
    pre = []
    for b, e in zip(reversed(begins), reversed(ends)):
        pre.extend([b, e])
    return [0] * nd, pre
