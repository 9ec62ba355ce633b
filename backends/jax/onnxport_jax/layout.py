"""The JAX side of channels-last execution (:mod:`onnxport.importing.layout` plans it): the conversions
between NCHW and NHWC and the spatial-major (HWIO) layout of Conv weights.

XLA:CPU runs a convolution in NHWC and puts a transpose on each side of an NCHW one; the plan
keeps a CNN's activations NHWC between its image ops. The weights of ungrouped channels-last Convs
are held HWIO instead of being transposed on every call: small import-time constants once at
import, params and ``consts`` once per array in ``model.jit()`` and ``model(...)``
(:meth:`JaxModel.laid_out`). ``params`` and ``consts`` keep their ONNX (OIHW) shapes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax.numpy as jnp
import numpy as np

from onnxport.importing.layout import NCHW_TO_NHWC, NHWC_TO_NCHW, OIHW_TO_HWIO, TO_FIRST, TO_LAST


def to_last(x: Any) -> Any:
    """NCHW -> NHWC; a lower-rank operand is first given leading unit dims (as broadcasting does)."""
    if x.ndim < 4:
        x = x.reshape((1,) * (4 - x.ndim) + tuple(x.shape))
    return x.transpose(NCHW_TO_NHWC)


def to_first(x: Any) -> Any:
    """NHWC -> NCHW."""
    return x.transpose(NHWC_TO_NCHW)


CONVERT: dict[str, Callable[[Any], Any]] = {TO_LAST: to_last, TO_FIRST: to_first}


def lay_out(x: Any) -> Any:
    """A weight's OIHW value as the HWIO array a planned Conv reads (numpy stays numpy)."""
    if isinstance(x, np.ndarray):
        return np.ascontiguousarray(x.transpose(OIHW_TO_HWIO))
    return jnp.transpose(x, OIHW_TO_HWIO)


def convert(x: Any, how: str | None) -> Any:
    """Apply a planned conversion to an array (numpy stays numpy)."""
    return x if how is None or x is None else CONVERT[how](x)
