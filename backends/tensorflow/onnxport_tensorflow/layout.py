"""Channels-last plan for 4-D image activations (NHWC inside the traced graph).

Placeholder plan: every value keeps its ONNX (NCHW) layout. ``plan`` decides per step which
inputs to convert, ``convert`` applies a decision, ``lay_out`` turns an OIHW weight into HWIO.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import tensorflow as tf


def plan(program: Any, static: dict, params: set) -> None:
    """Mark which steps run channels-last; the placeholder keeps everything NCHW."""
    program.hwio = set()


def convert(x: Any, how: str | None) -> Any:
    """Apply one conversion: ``"nhwc"`` (NCHW -> NHWC), ``"nchw"`` (back) or None."""
    if how is None or x is None:
        return x
    perm = [0, 2, 3, 1] if how == "nhwc" else [0, 3, 1, 2]
    if isinstance(x, np.ndarray):
        return np.transpose(x, perm)
    return tf.transpose(x, perm)


def lay_out(w: Any) -> Any:
    """An OIHW convolution weight as HWIO."""
    if isinstance(w, np.ndarray):
        return np.transpose(w, (2, 3, 1, 0))
    return tf.transpose(w, (2, 3, 1, 0))
