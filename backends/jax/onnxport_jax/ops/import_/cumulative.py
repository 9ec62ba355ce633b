"""CumSum and CumProd along one axis, inclusive or exclusive, forward or reverse."""

from __future__ import annotations

import jax.numpy as jnp

from onnxport import importer

from ...context import ints


@importer("CumSum", since=14)
@importer("CumProd", since=26)
def cumulative(ctx, x, axis, *, exclusive, reverse):
    (a,) = ints(ctx, 1, axis)
    a = a + x.ndim if a < 0 else a
    fn, unit = (jnp.cumsum, 0) if ctx.op_type == "CumSum" else (jnp.cumprod, 1)
    if reverse:
        x = jnp.flip(x, a)
    out = fn(x, axis=a, dtype=x.dtype)
    if exclusive:
        pad = [(0, 0)] * x.ndim
        pad[a] = (1, 0)
        out = jnp.pad(out, pad, constant_values=unit)
        out = jnp.take(out, jnp.arange(x.shape[a]), axis=a)
    if reverse:
        out = jnp.flip(out, a)
    return out
