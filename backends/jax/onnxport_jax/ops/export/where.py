"""select_n (jnp.where, lax.select and their n-way form) -> Where."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
from jax import lax

from onnxport import Sample, exporter

from ._samples import randint, randn

_A, _B = randn(2, 3, 4), randn(2, 3, 4, seed=1)


@exporter("lax.select_n", samples=[
    Sample(lambda c, a, b: jnp.where(c, a, b), (_A > 0, _A, _B), emits=("Where",)),
    Sample(lambda i, a, b, c: lax.select_n(i, a, b, c), (randint(0, 3, 2, 3, 4), _A, _B, _A * 2),
           emits=("Where", "Equal"), name="three_way"),
])
def select_n(g, which, *cases):
    """``cases[which]``: a boolean picks cases[1] where true; an index picks case i where it equals i."""
    if len(cases) == 1:
        return g.op("Identity", cases[0])
    if which.dtype is not None and which.dtype.name == "BOOL":
        return g.op("Where", which, cases[1], cases[0])
    out = cases[0]
    for i, case in enumerate(cases[1:], start=1):
        idx = g.const(np.asarray(i, dtype=np.dtype(g.in_aval(0).dtype)))
        out = g.op("Where", g.op("Equal", which, idx), case, out)
    return out
