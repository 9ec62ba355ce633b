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


def explicit_pads(pads: Sequence[int] | None, nd: int) -> list[int]:
    """A node's ``pads`` attribute, or the ONNX default (no padding) for ``nd`` spatial dims."""
    return [int(p) for p in pads] if pads else [0] * (2 * nd)


def resolve_pads(auto_pad: str, pads: Sequence[int] | None, spatial: Sequence[int], kernel: Sequence[int],
                 strides: Sequence[int], dilations: Sequence[int]) -> list[int]:
    """The explicit ``[begin..., end...]`` pads a conv/pool node uses, ``auto_pad`` applied."""
    nd = len(kernel)
    if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        return same_pads(spatial, kernel, strides, dilations, auto_pad)
    if auto_pad == "VALID" or not pads:
        return [0] * (2 * nd)
    return [int(p) for p in pads]


def spatial_settings(nd: int, kernel: Sequence[int], strides: Sequence[int] | None,
                     dilations: Sequence[int] | None) -> tuple[list[int], list[int], list[int]]:
    """Kernel, strides and dilations of a conv/pool node as int lists, ONNX defaults (1) filled in."""
    return ([int(k) for k in kernel], [int(s) for s in (strides or [1] * nd)],
            [int(d) for d in (dilations or [1] * nd)])
