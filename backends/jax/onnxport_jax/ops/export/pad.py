"""pad (-> Pad; negative amounts crop; interior padding through a strided scatter)."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
from jax import lax

from onnxport import Sample, exporter

from ._samples import randn


@exporter("lax.pad", samples=[
    Sample(lambda x: jnp.pad(x, ((1, 2), (0, 3))), (randn(2, 3),), emits=("Pad",)),
    Sample(lambda x: lax.pad(x, 1.5, ((-1, 2, 0), (1, -1, 0))), (randn(3, 4),), emits=("Pad",), name="negative"),
    Sample(lambda x: lax.pad(x, 0.0, ((0, 0, 1), (1, 0, 2))), (randn(3, 4),), emits=("Pad", "Reshape"), name="interior"),
])
def pad(g, x, value, *, padding_config):
    """Interior padding: each element followed by ``interior`` fill values (Pad a new trailing axis
    per dim, Reshape, drop the last fill), then the edge padding."""
    rank = len(padding_config)
    for axis, (_, _, interior) in enumerate(padding_config):
        if not interior:
            continue
        shape = list(x.shape)
        n = g.dim_or_none(shape[axis])
        if n is None:
            raise g.error("interior padding needs static sizes")
        y = g.op("Unsqueeze", x, g.const(np.asarray([axis + 1], dtype=np.int64)))
        pads = [0] * (rank + 1) * 2
        pads[rank + 1 + axis + 1] = int(interior)
        y = g.op("Pad", y, g.const(np.asarray(pads, dtype=np.int64)), value)
        merged = shape[:axis] + [n * (1 + int(interior))] + shape[axis + 1:]
        y = g.op("Reshape", y, g.shape(merged))
        end = n * (1 + int(interior)) - int(interior)
        x = g.op("Slice", y, g.ints([0]), g.ints([end]), g.ints([axis]))
        x.shape = None
        import onnx_ir as ir

        x.shape = ir.Shape(shape[:axis] + [end] + shape[axis + 1:])
    lo = [int(p[0]) for p in padding_config]
    hi = [int(p[1]) for p in padding_config]
    if not any(lo) and not any(hi):
        return g.op("Identity", x)
    return g.op("Pad", x, g.const(np.asarray(lo + hi, dtype=np.int64)), value)
