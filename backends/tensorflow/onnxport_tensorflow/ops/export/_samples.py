"""Sample inputs shared by the export primitives' samples, float32.

They come from numpy's global random state, which the registry seeds from the name of each
primitive module while importing it (``Backend.seeded``): the same values on every run.
"""

from __future__ import annotations

import numpy as np
import tensorflow as tf


def rand(*shape: int, dtype: str = "float32", low: float = -1.0, high: float = 1.0) -> np.ndarray:
    """Uniform random values of ``shape``."""
    return np.random.uniform(low, high, size=shape).astype(dtype)


def ints(*shape: int, low: int = 0, high: int = 5, dtype: str = "int32") -> np.ndarray:
    return np.random.randint(low, high, size=shape).astype(dtype)


def fn(f) -> tf.types.experimental.GenericFunction:
    """A ``tf.function`` of tensors (autograph off: the sample's own ops are what is traced)."""
    return tf.function(f, autograph=False)
