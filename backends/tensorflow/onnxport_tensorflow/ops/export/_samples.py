"""Sample inputs shared by the export primitives' samples (fixed seeds, float32)."""

from __future__ import annotations

import numpy as np
import tensorflow as tf

_RNG = np.random.default_rng(0)


def rand(*shape: int, dtype: str = "float32", low: float = -1.0, high: float = 1.0) -> np.ndarray:
    """Uniform random values of ``shape``."""
    return _RNG.uniform(low, high, size=shape).astype(dtype)


def ints(*shape: int, low: int = 0, high: int = 5, dtype: str = "int32") -> np.ndarray:
    return _RNG.integers(low, high, size=shape).astype(dtype)


def fn(f) -> tf.types.experimental.GenericFunction:
    """A ``tf.function`` of tensors (autograph off: the sample's own ops are what is traced)."""
    return tf.function(f, autograph=False)
