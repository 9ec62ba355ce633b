"""Cumulative ops and top_k: cumsum (-> CumSum), cummax, cummin, cumprod (-> log2(n) steps of
Max / Min / Mul over shifted copies), top_k (-> TopK)."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
from jax import lax

from onnxport import Sample, exporter

from ._samples import rand, randn

_X = randn(3, 5)


@exporter("lax.cumsum", samples=[
    Sample(lambda x: jnp.cumsum(x, axis=1), (_X,), emits=("CumSum",)),
    Sample(lambda x: lax.cumsum(x, axis=0, reverse=True), (_X,), emits=("CumSum",), name="reverse"),
])
def cumsum(g, x, *, axis, reverse=False):
    return g.op("CumSum", x, g.const(np.asarray(axis, dtype=np.int64)), reverse=1 if reverse else None)


def _doubling(g, x, axis: int, reverse: bool, op: str, identity) -> object:
    """Inclusive prefix ``op`` along a static axis in log2(n) steps (Hillis-Steele): at step k each
    element combines with the one 2**k before it (identity padding at the start)."""
    n = g.dim_or_none(x.shape[axis])
    if n is None:
        raise g.error("cumulative max/min/product along a symbolic axis is not exported")
    rank = g.rank(x)
    dt = g.out_dtype()
    y = x
    k = 1
    while k < n:
        pads = [0] * (2 * rank)
        if reverse:
            pads[rank + axis] = k
            shifted = g.op("Pad", y, g.const(np.asarray(pads, dtype=np.int64)), g.scalar(identity, dt))
            shifted = g.op("Slice", shifted, g.ints([k]), g.ints([n + k]), g.ints([axis]))
        else:
            pads[axis] = k
            shifted = g.op("Pad", y, g.const(np.asarray(pads, dtype=np.int64)), g.scalar(identity, dt))
            shifted = g.op("Slice", shifted, g.ints([0]), g.ints([n]), g.ints([axis]))
        y = g.op(op, y, shifted)
        k *= 2
    return y


def _lowest(dtype):
    dtype = np.dtype(dtype)
    return -np.inf if dtype.kind == "f" else np.iinfo(dtype).min


def _highest(dtype):
    dtype = np.dtype(dtype)
    return np.inf if dtype.kind == "f" else np.iinfo(dtype).max


@exporter("lax.cummax", samples=[Sample(lambda x: lax.cummax(x, axis=1), (_X,), emits=("Max",)),
                                 Sample(lambda x: lax.cummax(x, axis=0, reverse=True), (_X,), emits=("Max",), name="reverse")])
def cummax(g, x, *, axis, reverse=False):
    return _doubling(g, x, axis, reverse, "Max", _lowest(g.out_aval().dtype))


@exporter("lax.cummin", samples=[Sample(lambda x: lax.cummin(x, axis=1), (_X,), emits=("Min",))])
def cummin(g, x, *, axis, reverse=False):
    return _doubling(g, x, axis, reverse, "Min", _highest(g.out_aval().dtype))


@exporter("lax.cumprod", samples=[Sample(lambda x: jnp.cumprod(x, axis=1), (rand(3, 5, low=0.5, high=1.5),), emits=("Mul",))])
def cumprod(g, x, *, axis, reverse=False):
    return _doubling(g, x, axis, reverse, "Mul", 1)


@exporter("lax.top_k", samples=[Sample(lambda x: lax.top_k(x, 3), (randn(4, 6),), emits=("TopK",))])
def top_k(g, x, *, k, axis=-1, **_):
    """The k largest along ``axis`` (JAX's default: the last), sorted; indices in JAX's int32."""
    axis = int(axis)
    vals, idx = g.op("TopK", x, g.ints([int(k)]), axis=axis, largest=1, sorted=1, outputs=2)
    return vals, g.cast(idx, g.out_dtype(1))
