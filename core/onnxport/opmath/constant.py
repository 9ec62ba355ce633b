"""The value of a Constant node and the fill of ConstantOfShape, as numpy, from attributes."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np


def constant_value(*, sparse_value: Any = None, value: Any = None, value_float: float | None = None,
                   value_floats: Sequence[float] | None = None, value_int: int | None = None,
                   value_ints: Sequence[int] | None = None, value_string: str | None = None,
                   value_strings: Sequence[str] | None = None) -> np.ndarray:
    """A Constant's value (float attributes as float32, int ones as int64, strings as object).

    Raises ValueError for a sparse constant or a node that sets none of its value attributes.
    """
    if value is not None:
        return np.asarray(value)
    if sparse_value is not None:
        raise ValueError("sparse tensor constants are not supported (onnx-ir keeps no sparse tensors)")
    if value_float is not None:
        return np.asarray(value_float, dtype=np.float32)
    if value_floats is not None:
        return np.asarray(value_floats, dtype=np.float32)
    if value_int is not None:
        return np.asarray(value_int, dtype=np.int64)
    if value_ints is not None:
        return np.asarray(value_ints, dtype=np.int64)
    if value_string is not None:
        return np.asarray(value_string, dtype=object)
    if value_strings is not None:
        return np.asarray(value_strings, dtype=object)
    raise ValueError("Constant has no value attribute")


def fill_value(value: Any = None) -> np.ndarray:
    """ConstantOfShape's fill as a 1-D array (its first element fills; its dtype is the output's):
    ``value``, or float32 zero."""
    return np.asarray(value).reshape(-1) if value is not None else np.zeros(1, np.float32)
