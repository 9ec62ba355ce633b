"""ScatterElements and ScatterND (reductions none/add/mul/max/min); negative indices wrap.

Host (numpy) inputs stay numpy; traced inputs use functional ``.at[]`` updates.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from onnxport import importer

from ._static import xp
from .indexing import _nd_index, _wrap


def _np_scatter(out, index, updates, reduction):
    fn = {"add": np.add, "mul": np.multiply, "max": np.maximum, "min": np.minimum}.get(reduction)
    if fn is None:
        out[index] = updates
    else:
        fn.at(out, index, updates)
    return out


def _jnp_scatter(data, index, updates, reduction):
    ref = data.at[index]
    if reduction == "none":
        return ref.set(updates)
    return {"add": ref.add, "mul": ref.multiply, "max": ref.max, "min": ref.min}[reduction](updates)


def _scatter(ctx, data, index, updates, reduction):
    if reduction not in ("none", "add", "mul", "max", "min"):
        raise ctx.error(f"unknown reduction {reduction!r}")
    if xp(data, updates, *index) is np:
        return _np_scatter(np.array(data, copy=True), index, np.asarray(updates), reduction)
    return _jnp_scatter(jnp.asarray(data), index, updates, reduction)


@importer("ScatterElements", since=18)
def scatter_elements(ctx, data, indices, updates, *, axis, reduction):
    axis %= data.ndim
    m = xp(indices)
    grids = list(np.meshgrid(*[np.arange(s) for s in indices.shape], indexing="ij"))
    grids[axis] = _wrap(m, indices, data.shape[axis])
    return _scatter(ctx, data, tuple(grids), updates, reduction)


@importer("ScatterND", since=18)
def scatter_nd(ctx, data, indices, updates, *, reduction):
    m = xp(indices)
    return _scatter(ctx, data, _nd_index(m, data, indices, 0), updates, reduction)
