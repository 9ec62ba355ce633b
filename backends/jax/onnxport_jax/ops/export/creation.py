"""iota (jnp.arange and the index grids JAX builds) -> Range (+ Unsqueeze, Expand)."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
from jax import lax

from onnxport import Sample, exporter

from ._samples import randn


@exporter("lax.iota", samples=[
    Sample(lambda x: x + lax.iota(jnp.float32, 5), (randn(3, 5),), emits=("Add",)),
    Sample(lambda x: x * lax.broadcasted_iota(jnp.int32, (3, 5), 0), (randn(3, 5),), emits=("Mul",), name="2d"),
    Sample(lambda x: x + jnp.arange(x.shape[0], dtype=jnp.float32)[:, None], (randn(4, 3),), emits=("Add",), name="arange"),
])
def iota(g, *dyn, dtype, shape, dimension, **_):
    """Range over the iota dim (a constant when sizes are static), broadcast to ``shape``."""
    dims = [g.dim_or_none(d) for d in shape]
    if all(d is not None for d in dims):
        arr = np.broadcast_to(
            np.arange(dims[dimension]).reshape([-1 if i == dimension else 1 for i in range(len(dims))]), dims
        ).astype(np.dtype(dtype))
        if arr.dtype.name == "bfloat16":
            return g.cast(g.const(arr.astype(np.float32)), g.onnx_dtype(dtype))
        return g.const(np.ascontiguousarray(arr))
    n = g.dim(shape[dimension])
    n = n if not isinstance(n, int) else g.ints([n])
    n0 = g.op("Squeeze", n, g.const(np.asarray([0], dtype=np.int64)))
    r = g.op("Range", g.const(np.asarray(0, dtype=np.int64)), n0, g.const(np.asarray(1, dtype=np.int64)))
    others = [i for i in range(len(shape)) if i != dimension]
    if others:
        r = g.op("Unsqueeze", r, g.const(np.asarray(others, dtype=np.int64)))
        r = g.op("Expand", r, g.shape(shape))
    return g.cast(r, g.onnx_dtype(dtype))
