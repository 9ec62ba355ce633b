"""Sample inputs shared by the export primitives' samples (fixed seeds: the same every run).

Each is put on the device as it is (``jax.device_put``: no conversion is compiled per shape, which
``jnp.asarray`` would do at the import of every primitive module).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np


def randn(*shape: int, seed: int = 0, dtype: str = "float32") -> jnp.ndarray:
    """Normal samples as a JAX array."""
    return jax.device_put(np.random.default_rng(seed + sum(shape)).standard_normal(shape).astype(dtype))


def rand(*shape: int, seed: int = 0, low: float = 0.1, high: float = 1.0) -> jnp.ndarray:
    """Uniform samples in ``[low, high)`` as a float32 JAX array."""
    return jax.device_put(np.random.default_rng(seed + sum(shape)).uniform(low, high, shape).astype("float32"))


def randint(low: int, high: int, *shape: int, seed: int = 0, dtype: str = "int32") -> jnp.ndarray:
    """Integers in ``[low, high)`` as a JAX array."""
    return jax.device_put(np.random.default_rng(seed + sum(shape)).integers(low, high, shape).astype(dtype))
