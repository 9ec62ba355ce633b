"""GridSample and AffineGrid maths that knows no framework: the normalized-to-pixel coordinate
map, the sampling bounds, cubic tap weights, and AffineGrid's base coordinates.

The coordinate helpers use array operators only, so they work on any framework's arrays.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np


def unnormalize(v: Any, size: int, align_corners: int) -> Any:
    """Grid coordinates in [-1, 1] as pixel coordinates of an axis of ``size``."""
    return (v + 1) / 2 * (size - 1) if align_corners else ((v + 1) * size - 1) / 2


def sample_bounds(size: int, align_corners: int) -> tuple[float, float]:
    """The coordinate range inside the input: pixel centres (align_corners) or edges."""
    return (0.0, size - 1.0) if align_corners else (-0.5, size - 0.5)


def cubic_weights(t: Any, a: float = -0.75) -> list[Any]:
    """The four cubic-convolution weights of taps ``-1, 0, 1, 2`` at fraction ``t`` in [0, 1)."""
    return [((a * (t + 1) - 5 * a) * (t + 1) + 8 * a) * (t + 1) - 4 * a,
            ((a + 2) * t - (a + 3)) * t * t + 1,
            ((a + 2) * (1 - t) - (a + 3)) * (1 - t) * (1 - t) + 1,
            ((a * (2 - t) - 5 * a) * (2 - t) + 8 * a) * (2 - t) - 4 * a]


def affine_base(spatial: Sequence[int], align_corners: int) -> np.ndarray:
    """AffineGrid's normalized output coordinates as float64 ``[prod(spatial), r + 1]`` rows
    ``(x, y[, z], 1)`` (the last spatial dim is x), to be multiplied by ``theta``."""
    axes = []
    for s in spatial:
        if align_corners:
            axes.append(np.linspace(-1.0, 1.0, s) if s > 1 else np.zeros(1))
        else:
            axes.append((np.arange(s) * 2.0 + 1.0) / s - 1.0)
    mesh = np.meshgrid(*axes, indexing="ij")  # per dim, [*spatial]
    coords = np.stack([*reversed(mesh), np.ones(mesh[0].shape)], axis=-1)  # (x, y[, z], 1)
    return coords.reshape(-1, len(spatial) + 1)
