"""sort (jnp.sort, argsort: one key, any number of operands carried along) -> TopK + GatherElements."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from onnxport import Sample, exporter

from ._samples import randint, randn


@exporter("lax.sort", samples=[
    Sample(lambda x: jnp.sort(x, axis=1), (randn(3, 6),), emits=("TopK",)),
    Sample(lambda x: jnp.argsort(x, axis=-1), (randn(3, 6),), emits=("TopK",), name="argsort"),
    Sample(lambda x: jnp.argsort(x, axis=0, stable=True), (randint(0, 3, 8, 2),), emits=("TopK",), name="stable_ties"),
])
def sort(g, *operands, dimension, is_stable=True, num_keys=1):
    """Ascending along ``dimension`` by the first operand (TopK, smallest first; ties keep their
    order); the other operands follow through GatherElements."""
    if num_keys != 1:
        raise g.error(f"sorting by {num_keys} keys is not exported")
    key = operands[0]
    n = g.dim(key.shape[dimension])
    vals, idx = g.op("TopK", key, g.ints([n]) if isinstance(n, int) else n, axis=int(dimension),
                     largest=0, sorted=1, outputs=2)
    outs = [vals]
    for op in operands[1:]:
        outs.append(g.op("GatherElements", op, idx, axis=int(dimension)))
    return tuple(outs)


_ = np
