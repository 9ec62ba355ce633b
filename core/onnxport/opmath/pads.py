"""ONNX ``auto_pad`` arithmetic for convolution and pooling ops, shared by every backend."""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from typing import NamedTuple

import numpy as np


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


class PoolSettings(NamedTuple):
    """A pooling node's window arithmetic per spatial dim: the padding it applies
    (``begins``/``ends``), the ``extra`` end padding ceil mode needs so every window fits,
    and the output sizes ``out``."""

    kernel: list[int]
    strides: list[int]
    dilations: list[int]
    begins: list[int]
    ends: list[int]
    extra: list[int]
    out: list[int]

    @property
    def padding(self) -> list[tuple[int, int]]:
        """``(begin, end)`` per spatial dim, the ceil-mode extension included."""
        return [(b, e + x) for b, e, x in zip(self.begins, self.ends, self.extra)]


def pool_settings(spatial: Sequence[int], kernel_shape: Sequence[int], strides: Sequence[int] | None,
                  dilations: Sequence[int] | None, auto_pad: str, pads: Sequence[int] | None,
                  ceil_mode: int) -> PoolSettings:
    """The :class:`PoolSettings` of a pooling node over an input of ``spatial`` dims, as ONNX
    defines them (with ceil mode, a last window must start inside the input or begin pad)."""
    nd = len(kernel_shape)
    kernel, strides, dilations = spatial_settings(nd, kernel_shape, strides, dilations)
    spatial = [int(s) for s in spatial]
    begins, ends, out = [], [], []
    for i, (size, k, s, d) in enumerate(zip(spatial, kernel, strides, dilations)):
        span = (k - 1) * d + 1
        if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
            n = math.ceil(size / s)
            total = max((n - 1) * s + span - size, 0)
            b, e = split_total(total, auto_pad)
        else:
            b, e = (int(pads[i]), int(pads[nd + i])) if (pads and auto_pad != "VALID") else (0, 0)
            q = (size + b + e - span) / s + 1
            if ceil_mode:
                n = math.ceil(q)
                if (n - 1) * s >= size + b:  # the last window must start inside input + begin pad
                    n -= 1
            else:
                n = math.floor(q)
        begins.append(b)
        ends.append(e)
        out.append(int(n))
    extra = [max((o - 1) * s + (k - 1) * d + 1 - (size + b + e), 0)
             for o, s, k, d, size, b, e in zip(out, strides, kernel, dilations, spatial, begins, ends)]
    return PoolSettings(kernel, strides, dilations, begins, ends, extra, out)


def window_slices(padded: Sequence[int], kernel: Sequence[int], strides: Sequence[int],
                  dilations: Sequence[int]) -> Iterator[tuple[tuple[int, ...], list[tuple[int, int, int]]]]:
    """For each kernel tap of a window op over an already padded input of spatial dims
    ``padded``: ``(tap, [(start, stop, step) per spatial dim])``, the strided slice that tap
    reads for every output position."""
    nd = len(kernel)
    out = [(int(padded[i]) - (kernel[i] - 1) * dilations[i] - 1) // strides[i] + 1 for i in range(nd)]
    for tap in np.ndindex(*kernel):
        spans = []
        for i in range(nd):
            start = tap[i] * dilations[i]
            spans.append((start, start + (out[i] - 1) * strides[i] + 1, strides[i]))
        yield tap, spans


def window_sums(a: np.ndarray, kernel: Sequence[int], strides: Sequence[int], dilations: Sequence[int],
                pads: Sequence[tuple[int, int]]) -> np.ndarray:
    """Window sums of a small static ``[N, C, *spatial]`` numpy array, zero-padded by ``pads``."""
    nd = len(kernel)
    a = np.pad(a, [(0, 0), (0, 0), *pads])
    for i in range(nd):
        ax = 2 + i
        span = (kernel[i] - 1) * dilations[i] + 1
        n = (a.shape[ax] - span) // strides[i] + 1
        taps = (np.arange(n) * strides[i])[:, None] + np.arange(kernel[i]) * dilations[i]
        a = np.take(a, taps, axis=ax).sum(axis=ax + 1)
    return a


def average_pool_counts(spatial: Sequence[int], st: PoolSettings, count_include_pad: int) -> np.ndarray:
    """AveragePool's divisor per output position, float64 ``[1, 1, *out]``: the input elements
    each window covers, plus its explicit padding with ``count_include_pad`` (the ceil-mode
    overhang never counts)."""
    ones = np.ones((1, 1, *[int(s) for s in spatial]), np.float64)
    if count_include_pad:
        ones = np.pad(ones, [(0, 0), (0, 0), *zip(st.begins, st.ends)], constant_values=1.0)
        cpad = [(0, x) for x in st.extra]
    else:
        cpad = st.padding
    return window_sums(ones, st.kernel, st.strides, st.dilations, cpad)
