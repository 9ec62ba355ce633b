"""Slice and Split index arithmetic: what ONNX selects on an axis of static size."""

from __future__ import annotations

import math


def onnx_slice(dim: int, start: int, end: int, step: int) -> slice:
    """A Python slice selecting what ONNX Slice selects on an axis of size ``dim``
    (negative starts/ends count from the end; out-of-range ones are clamped)."""
    if start < 0:
        start += dim
    if end < 0:
        end += dim
    if step > 0:
        start = min(max(start, 0), dim)
        end = min(max(end, 0), dim)
        return slice(start, end, step)
    start = min(max(start, 0), dim - 1)
    end = min(max(end, -1), dim - 1)
    return slice(start, end if end >= 0 else None, step)


def even_split(dim: int, n: int) -> list[int]:
    """Split without explicit sizes: ``n`` pieces of ``ceil(dim / n)``, the last ones smaller.

    Raises ValueError for a non-positive ``n``."""
    if n <= 0:
        raise ValueError(f"cannot split into {n} pieces")
    size = math.ceil(dim / n)
    return [min(size, max(dim - i * size, 0)) for i in range(n)]
