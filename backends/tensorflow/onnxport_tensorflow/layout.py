"""The TensorFlow side of channels-last execution (:mod:`onnxport.importing.layout` plans it): the
conversions between NCHW and NHWC and the spatial-major (HWIO) layout of Conv weights.

TensorFlow's CPU kernels convolve and pool NHWC only; the plan keeps a CNN's activations NHWC
between its image ops, so its traced graph has no Transpose between consecutive convolutions.
Ungrouped channels-last Convs read their weights HWIO: import-time constants (also those held in
non-trainable variables) are laid out once at import; trainable variables keep their ONNX (OIHW)
shape and are transposed where they are read (a weight transpose, never an activation one).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import tensorflow as tf

from onnxport.importing.layout import NCHW_TO_NHWC, NHWC_TO_NCHW, OIHW_TO_HWIO, TO_FIRST, TO_LAST


def to_last(x: Any) -> Any:
    """NCHW -> NHWC; a lower-rank operand is first given leading unit dims (as broadcasting does)."""
    if isinstance(x, (np.ndarray, np.generic)):
        x = np.asarray(x)
        if x.ndim < 4:
            x = x.reshape((1,) * (4 - x.ndim) + tuple(x.shape))
        return np.transpose(x, NCHW_TO_NHWC)
    if len(x.shape) < 4:
        x = tf.reshape(x, [1] * (4 - len(x.shape)) + x.shape.as_list())
    return _permute(x, NCHW_TO_NHWC)


def to_first(x: Any) -> Any:
    """NHWC -> NCHW."""
    if isinstance(x, (np.ndarray, np.generic)):
        return np.transpose(x, NHWC_TO_NCHW)
    return _permute(x, NHWC_TO_NCHW)


def _permute(x: Any, perm: tuple[int, ...]) -> Any:
    """``tf.transpose``, or a reshape when the permutation only moves size-1 dims (a per-channel
    scale [1, C, 1, 1], a pooled [N, 1, 1, C]): the same values, no data movement."""
    dims = x.shape.as_list()
    if None not in dims:
        moved = [p for p in perm if dims[p] != 1]
        if moved == sorted(moved):
            return tf.reshape(x, [dims[p] for p in perm])
    return tf.transpose(x, perm)


CONVERT: dict[str, Callable[[Any], Any]] = {TO_LAST: to_last, TO_FIRST: to_first}


def lay_out(x: Any) -> Any:
    """A weight's OIHW value as the HWIO array a planned Conv reads (numpy stays numpy)."""
    if isinstance(x, np.ndarray):
        return np.ascontiguousarray(x.transpose(OIHW_TO_HWIO))
    return tf.transpose(x, OIHW_TO_HWIO)


def convert(x: Any, how: str | None) -> Any:
    """Apply a planned conversion to an array (numpy stays numpy)."""
    return x if how is None or x is None else CONVERT[how](x)
