"""rev (jnp.flip, x[::-1]) -> Slice with negative steps."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from onnxport import Sample, exporter

from ._samples import randn


@exporter("lax.rev", samples=[Sample(lambda x: x[:, ::-1], (randn(2, 3, 4),), emits=("Slice",)),
                              Sample(lambda x: jnp.flip(x, (0, 2)), (randn(2, 3, 4),), emits=("Slice",), name="two"),
                              Sample(lambda x: x[:, ::-1] * 2, (randn(2, 3, 4),), emits=("Slice",), name="inner")])
def rev(g, x, *, dimensions):
    n = len(dimensions)
    big = np.iinfo(np.int64)
    return g.op("Slice", x, g.const(np.full(n, -1, dtype=np.int64)), g.const(np.full(n, big.min, dtype=np.int64)),
                g.const(np.asarray(dimensions, dtype=np.int64)), g.const(np.full(n, -1, dtype=np.int64)))
