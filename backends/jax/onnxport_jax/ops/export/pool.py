"""Window reductions (Flax max_pool / avg_pool, lax.reduce_window): reduce_window_max,
reduce_window_min, reduce_window_sum -> MaxPool, -MaxPool(-x), AveragePool * window size.

The pooled dims (a window, stride or padding other than 1/1/0) go last and the others first
(NHWC -> NCHW: a Transpose each side that the optimizer cancels between layers); with other than
two untouched dims they are flattened into the channel dim."""

from __future__ import annotations

import math

import numpy as np
from jax import lax

from onnxport import Sample, exporter

from ._samples import randn

_X = randn(2, 8, 8, 3)


def _pooled(g, x, window_dimensions, window_strides, padding, base_dilation, window_dilation, emit):
    if any(int(d) != 1 for d in base_dilation):
        raise g.error("window reductions over a dilated input are not exported")
    rank = g.rank(x)
    pooled = [d for d in range(rank) if window_dimensions[d] != 1 or window_strides[d] != 1
              or tuple(padding[d]) != (0, 0) or window_dilation[d] != 1]
    rest = [d for d in range(rank) if d not in pooled]
    if not pooled:
        return None
    perm = rest + pooled
    y = g.op("Transpose", x, perm=perm) if perm != list(range(rank)) else x
    shape = [x.shape[d] for d in rest]
    flat = len(rest) != 2
    if flat:
        lead = [g.dim(d) for d in shape]
        spatial = [g.dim(x.shape[d]) for d in pooled]
        n = math.prod(d for d in lead if isinstance(d, int)) if all(isinstance(d, int) for d in lead) else None
        if n is None:
            raise g.error("a window reduction over symbolic leading dims is not exported")
        y = g.op("Reshape", y, g.ints([1, n] + spatial))
    kernel = [int(window_dimensions[d]) for d in pooled]
    attrs = dict(kernel_shape=kernel, strides=[int(window_strides[d]) for d in pooled],
                 pads=[int(padding[d][0]) for d in pooled] + [int(padding[d][1]) for d in pooled],
                 dilations=[int(window_dilation[d]) for d in pooled])
    if all(d == 1 for d in attrs["dilations"]):
        del attrs["dilations"]
    if min(attrs["pads"]) < 0:
        raise g.error("negative window padding is not exported")
    y = emit(y, attrs, kernel)
    if flat:
        out = g.out_shape()
        y = g.op("Reshape", y, g.shape([out[d] for d in rest] + [out[d] for d in pooled]))
    inv = [perm.index(d) for d in range(rank)]
    return g.op("Transpose", y, perm=inv) if inv != list(range(rank)) else y


@exporter("lax.reduce_window_max", samples=[
    Sample(lambda x: lax.reduce_window(x, -np.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID"), (_X,), emits=("MaxPool",)),
    Sample(lambda x: lax.reduce_window(x, -np.inf, lax.max, (1, 3, 3, 1), (1, 2, 2, 1), "SAME"), (_X,), emits=("MaxPool",), name="same"),
    Sample(lambda x: lax.reduce_window(x, -np.inf, lax.max, (1, 3), (1, 2), "VALID"), (randn(4, 9),),
           emits=("MaxPool",), name="rank2"),
])
def reduce_window_max(g, x, *, window_dimensions, window_strides, padding, base_dilation, window_dilation):
    def emit(y, attrs, _):
        return g.op("MaxPool", y, **attrs)

    out = _pooled(g, x, window_dimensions, window_strides, padding, base_dilation, window_dilation, emit)
    return g.op("Identity", x) if out is None else out


@exporter("lax.reduce_window_min", samples=[
    Sample(lambda x: lax.reduce_window(x, np.inf, lax.min, (1, 2, 2, 1), (1, 2, 2, 1), "VALID"), (_X,),
           emits=("MaxPool", "Neg"))])
def reduce_window_min(g, x, *, window_dimensions, window_strides, padding, base_dilation, window_dilation):
    def emit(y, attrs, _):
        return g.op("Neg", g.op("MaxPool", g.op("Neg", y), **attrs))

    out = _pooled(g, x, window_dimensions, window_strides, padding, base_dilation, window_dilation, emit)
    return g.op("Identity", x) if out is None else out


@exporter("lax.reduce_window_sum", samples=[
    Sample(lambda x: lax.reduce_window(x, 0.0, lax.add, (1, 2, 2, 1), (1, 2, 2, 1), "VALID") / 4, (_X,), emits=("AveragePool",)),
    Sample(lambda x: lax.reduce_window(x, 0.0, lax.add, (1, 3, 3, 1), (1, 1, 1, 1), "SAME"), (_X,), emits=("AveragePool",), name="same"),
])
def reduce_window_sum(g, x, *, window_dimensions, window_strides, padding, base_dilation, window_dilation):
    """AveragePool counting the zero padding, times the window size."""
    def emit(y, attrs, kernel):
        if "dilations" in attrs and g.opset < 19:
            raise g.error("a dilated average window needs opset 19")
        avg = g.op("AveragePool", y, count_include_pad=1, **attrs)
        return g.op("Mul", avg, g.scalar(math.prod(kernel), g.out_dtype()))

    out = _pooled(g, x, window_dimensions, window_strides, padding, base_dilation, window_dilation, emit)
    return g.op("Identity", x) if out is None else out
