"""Shape ops: broadcast_in_dim, reshape, squeeze, transpose (-> Unsqueeze + Expand,
Reshape, Squeeze, Transpose)."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
from jax import lax

from onnxport import Sample, exporter

from ._samples import randn

_X = randn(2, 3, 4)


@exporter("lax.broadcast_in_dim", samples=[
    Sample(lambda x: jnp.broadcast_to(x[:, None, :], (2, 5, 4)) * 1.0, (randn(2, 4),), emits=("Expand",)),
    Sample(lambda x: x + jnp.ones((3, 1)), (randn(3, 4),), emits=("Add",), name="constant"),
    Sample(lambda x: lax.broadcast_in_dim(x, (2, 3, 4), (1,)), (randn(3),), emits=("Unsqueeze", "Expand"), name="middle"),
])
def broadcast_in_dim(g, x, *dyn, shape, broadcast_dimensions, **_):
    """Unsqueeze the new dims, then Expand where sizes differ."""
    new = [i for i in range(len(shape)) if i not in broadcast_dimensions]
    y = g.op("Unsqueeze", x, g.const(np.asarray(new, dtype=np.int64))) if new else x
    src = list(x.shape) if x.shape is not None else None
    kept = [1] * len(shape)
    if src is not None:
        for d, a in zip(src, broadcast_dimensions):
            kept[a] = d
    if src is not None and all(g.dim_or_none(a) == g.dim_or_none(b) and g.dim_or_none(a) is not None
                               for a, b in zip(kept, shape)):
        return y if new else g.op("Identity", x)
    return g.op("Expand", y, g.shape(shape))


@exporter("lax.reshape", samples=[
    Sample(lambda x: x.reshape(x.shape[0] * 3, 4), (_X,), emits=("Reshape",)),
    Sample(lambda x: lax.reshape(x, (4, x.shape[0] * 3), dimensions=(2, 0, 1)), (_X,), emits=("Transpose", "Reshape"),
           name="dimensions"),
])
def reshape(g, x, *dyn, new_sizes, dimensions=None, **_):
    if dimensions is not None and list(dimensions) != list(range(len(dimensions))):
        x = g.op("Transpose", x, perm=list(dimensions))
    return g.op("Reshape", x, g.shape(new_sizes))


@exporter("lax.dim_as_value", samples=[
    Sample(lambda x: x * x.shape[0], (randn(3, 4),), emits=("Shape",), name="symbolic")])
def dim_as_value(g, *, dim, **_):
    """A symbolic size as a 0-d value (its static value when the dim is static)."""
    size = g.dim(dim)
    if isinstance(size, int):
        return g.scalar(size, g.out_dtype())
    return g.cast(g.op("Squeeze", size, g.const(np.asarray([0], dtype=np.int64))), g.out_dtype())


@exporter("lax.squeeze", samples=[Sample(lambda x: jnp.squeeze(x, (0, 2)), (randn(1, 3, 1, 4),), emits=("Squeeze",))])
def squeeze(g, x, *, dimensions):
    return g.op("Squeeze", x, g.const(np.asarray(dimensions, dtype=np.int64)))


@exporter("lax.transpose", samples=[Sample(lambda x: jnp.transpose(x, (2, 0, 1)), (_X,), emits=("Transpose",))])
def transpose(g, x, *, permutation):
    return g.op("Transpose", x, perm=list(permutation))
