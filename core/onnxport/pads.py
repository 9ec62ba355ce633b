"""ONNX ``auto_pad`` arithmetic for convolution and pooling ops, shared by every backend."""

from __future__ import annotations

import math
from collections.abc import Sequence


def split_total(total: int, auto_pad: str) -> tuple[int, int]:
    """``(begin, end)`` of a dimension's total padding: SAME_UPPER puts the odd pixel at the end."""
    small, big = total // 2, total - total // 2
    return (small, big) if auto_pad == "SAME_UPPER" else (big, small)


def same_pads(spatial: Sequence[int], kernel: Sequence[int], strides: Sequence[int],
              dilations: Sequence[int], auto_pad: str) -> list[int]:
    """SAME_UPPER / SAME_LOWER pads as ``[begin..., end...]`` (output = ceil(input / stride))."""
    begins, ends = [], []
    for size, k, s, d in zip(spatial, kernel, strides, dilations):
        size = int(size)
        out = math.ceil(size / s)
        b, e = split_total(max((out - 1) * s + (k - 1) * d + 1 - size, 0), auto_pad)
        begins.append(b)
        ends.append(e)
    return begins + ends
