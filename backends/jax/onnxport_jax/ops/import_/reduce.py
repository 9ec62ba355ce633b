"""Reductions over axes (ReduceSum ... ReduceLogSumExp) and ArgMax/ArgMin."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from onnxport import importer

from ... import dtypes
from ...context import ints


def _axes(ctx, x, axes, noop_with_empty_axes) -> tuple[int, ...] | None:
    """The axes to reduce; None means "return the input unchanged" (noop_with_empty_axes)."""
    dims = ints(ctx, 1, axes) if axes is not None else []
    if not dims:
        return None if noop_with_empty_axes else tuple(range(x.ndim))
    return tuple(sorted({a + x.ndim if a < 0 else a for a in dims}))


def _lowest(dtype):
    if dtypes.is_float(dtype):
        return -jnp.inf
    if jnp.dtype(dtype) == jnp.bool_:
        return False
    return jnp.iinfo(dtype).min


def _highest(dtype):
    if dtypes.is_float(dtype):
        return jnp.inf
    if jnp.dtype(dtype) == jnp.bool_:
        return True
    return jnp.iinfo(dtype).max


def _float(x):
    return x if dtypes.is_float(x.dtype) else x.astype(jnp.float64 if x.dtype.itemsize == 8 else jnp.float32)


def _log_sum_exp(x, axis, keepdims):
    xf = _float(x)
    m = jnp.max(xf, axis=axis, keepdims=True, initial=-jnp.inf)
    m = jnp.where(jnp.isfinite(m), m, jnp.zeros((), m.dtype))
    out = jnp.log(jnp.sum(jnp.exp(xf - m), axis=axis, keepdims=True)) + m
    return out if keepdims else jnp.squeeze(out, axis)


_REDUCE = {
    "ReduceSum": (13, lambda x, a, k: jnp.sum(x, axis=a, keepdims=k)),
    "ReduceMean": (18, lambda x, a, k: jnp.mean(_float(x), axis=a, keepdims=k)),
    "ReduceMax": (20, lambda x, a, k: jnp.max(x, axis=a, keepdims=k, initial=_lowest(x.dtype))),
    "ReduceMin": (20, lambda x, a, k: jnp.min(x, axis=a, keepdims=k, initial=_highest(x.dtype))),
    "ReduceProd": (18, lambda x, a, k: jnp.prod(x, axis=a, keepdims=k)),
    "ReduceL1": (18, lambda x, a, k: jnp.sum(jnp.abs(x), axis=a, keepdims=k)),
    "ReduceL2": (18, lambda x, a, k: jnp.sqrt(jnp.sum(jnp.square(_float(x)), axis=a, keepdims=k))),
    "ReduceLogSum": (28, lambda x, a, k: jnp.log(jnp.sum(_float(x), axis=a, keepdims=k))),
    "ReduceLogSumExp": (28, _log_sum_exp),
    "ReduceSumSquare": (18, lambda x, a, k: jnp.sum(jnp.square(x), axis=a, keepdims=k)),
}


def _reduce(ctx, data, axes=None, *, keepdims, noop_with_empty_axes):
    axis = _axes(ctx, data, axes, noop_with_empty_axes)
    if axis is None:
        return data
    out = _REDUCE[ctx.op_type][1](data, axis, bool(keepdims))
    return out.astype(data.dtype)


for _op, (_since, _) in _REDUCE.items():
    _reduce = importer(_op, since=_since)(_reduce)


@importer("ArgMax", since=13)
@importer("ArgMin", since=13)
def arg_extreme(ctx, data, *, axis, keepdims, select_last_index):
    axis = axis + data.ndim if axis < 0 else axis
    fn = jnp.argmax if ctx.op_type == "ArgMax" else jnp.argmin
    if select_last_index:
        n = data.shape[axis]
        idx = (n - 1) - fn(jnp.flip(data, axis), axis=axis, keepdims=bool(keepdims))
    else:
        idx = fn(data, axis=axis, keepdims=bool(keepdims))
    return idx.astype(np.int64)
