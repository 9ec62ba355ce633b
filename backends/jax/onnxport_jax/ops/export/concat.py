"""concatenate, split (-> Concat, Split)."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from onnxport import Sample, exporter

from ._samples import randn


@exporter("lax.concatenate", samples=[
    Sample(lambda a, b: jnp.concatenate([a, b], axis=1), (randn(2, 3), randn(2, 5)), emits=("Concat",))])
def concatenate(g, *xs, dimension):
    return g.op("Concat", *xs, axis=int(dimension))


@exporter("lax.split", samples=[
    Sample(lambda x: jnp.split(x, [1, 3], axis=1), (randn(2, 5),), emits=("Split",))])
def split(g, x, *, sizes, axis):
    outs = g.op("Split", x, g.shape(sizes), axis=int(axis), outputs=len(sizes))
    return outs if isinstance(outs, tuple) else (outs,)


_ = np
