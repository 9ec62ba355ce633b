"""Small JAX helpers shared by the plugin's JAX primitives."""

from __future__ import annotations

import jax.numpy as jnp


def wide(x):
    """``x`` in float32 where it is narrower (onnxruntime's contrib kernels compute half types in
    float32 and round the result once)."""
    return x.astype(jnp.float32) if x.dtype in (jnp.float16, jnp.bfloat16) else x
