"""Helpers for static (numpy) versus traced values, on top of ``onnxport_jax.context``.

Shape-like inputs must be concrete for ``jax.jit``: primitives read them with ``ints`` /
``ctx.concrete``, which raise the context's DataDependentError (naming the node) when traced.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from ...context import ints, is_static

__all__ = ["concrete", "ints", "is_static", "is_tracer", "np_dtype", "xp"]


def is_tracer(x: Any) -> bool:
    """Whether ``x`` is an abstract value inside a jax transformation (no concrete data)."""
    return isinstance(x, jax.core.Tracer)


def xp(*xs: Any):
    """``numpy`` when every input is a host value (shape computations stay static), else ``jnp``."""
    return np if all(is_static(x) for x in xs) else jnp


def concrete(ctx, i: int, x: Any, what: str = "") -> np.ndarray | None:
    """Input ``i`` as numpy: its import-time value, else ``x`` when concrete; None if absent."""
    if x is None:
        return None
    c = ctx.const(i)
    if c is not None:
        return np.asarray(c)
    return ctx.concrete(x, f"input {i}{' (' + what + ')' if what else ''}")


def np_dtype(code: int | None, default: Any = None) -> np.dtype:
    """The numpy (= JAX) dtype of an ONNX ``dtype`` attribute, or ``default`` when it is unset."""
    from ...dtypes import to_numpy_dtype

    if code is None or code == 0:
        return np.dtype(default)
    return to_numpy_dtype(code)
