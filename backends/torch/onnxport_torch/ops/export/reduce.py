"""Reductions: sum, mean, amax, amin, prod, var, argmax, argmin (axes as input: newest forms)."""

from __future__ import annotations

import numpy as np
import torch

from onnxport import Sample, exporter

_X = torch.randn(2, 3, 4)


def _axes(g, x, dims):
    if dims is None or (isinstance(dims, (list, tuple)) and len(dims) == 0):
        return None
    dims = [dims] if isinstance(dims, int) else list(dims)
    rank = g.rank(x)
    return g.const(np.asarray([g.axis(d, rank) for d in dims], dtype=np.int64))


def _reduce(g, op, x, dims, keepdim):
    dt = g.out_dtype()
    if op in ("ReduceSum", "ReduceMean", "ReduceProd"):
        x = g.cast(x, dt)
    return g.op(op, x, _axes(g, x, dims), keepdims=int(bool(keepdim)))


@exporter(
    "aten.sum.dim_IntList",
    samples=[Sample(lambda x: x.sum((0, 2), keepdim=True), (_X,), emits=("ReduceSum",), name="dims"),
             Sample(lambda x: x.sum(), (_X,), emits=("ReduceSum",), name="all"),
             Sample(lambda b: b.sum(-1), (_X > 0,), emits=("ReduceSum", "Cast"), name="bool")],
)
def sum(g, x, dim=None, keepdim=False, *, dtype=None):  # noqa: A001 - the ATen name
    return _reduce(g, "ReduceSum", x, dim, keepdim)


@exporter(
    "aten.mean.dim", "aten.mean.default",
    samples=[Sample(lambda x: x.mean((2, 3)), (torch.randn(2, 3, 4, 5),), emits=("ReduceMean",), name="dims"),
             Sample(lambda x: x.mean(), (_X,), emits=("ReduceMean",), name="all")],
)
def mean(g, x, dim=None, keepdim=False, *, dtype=None):
    return _reduce(g, "ReduceMean", x, dim, keepdim)


@exporter("aten.amax.default", samples=[Sample(lambda x: x.amax(1), (_X,), emits=("ReduceMax",))])
def amax(g, x, dim=(), keepdim=False):
    return _reduce(g, "ReduceMax", x, dim, keepdim)


@exporter("aten.amin.default", samples=[Sample(lambda x: x.amin((0, 1), keepdim=True), (_X,), emits=("ReduceMin",))])
def amin(g, x, dim=(), keepdim=False):
    return _reduce(g, "ReduceMin", x, dim, keepdim)


@exporter("aten.prod.dim_int", samples=[Sample(lambda x: x.prod(1), (_X,), emits=("ReduceProd",))])
def prod(g, x, dim, keepdim=False, *, dtype=None):
    return _reduce(g, "ReduceProd", x, [dim], keepdim)


@exporter(
    "aten.var.correction",
    samples=[Sample(lambda x: x.var(-1, keepdim=True), (_X,), emits=("ReduceMean",), name="unbiased"),
             Sample(lambda x: x.var((0, 2), unbiased=False), (_X,), emits=("ReduceMean",), name="biased")],
)
def var(g, x, dim=None, *, correction=None, keepdim=False):
    """mean((x - mean)^2) * n / (n - correction)."""
    axes = _axes(g, x, dim)
    mu = g.op("ReduceMean", x, axes, keepdims=1)
    d = g.op("Sub", x, mu)
    v = g.op("ReduceMean", g.op("Mul", d, d), axes, keepdims=int(bool(keepdim)))
    corr = 1 if correction is None else correction
    if corr == 0:
        return v
    rank = g.rank(x)
    dims = range(rank) if dim is None or len(dim) == 0 else [g.axis(d, rank) for d in dim]
    sizes = [x.shape[d] for d in dims]
    if all(isinstance(s, int) for s in sizes):
        n = float(np.prod(sizes))
        return g.op("Mul", v, g.scalar(n / (n - corr), x.dtype))
    n = g.cast(g.op("ReduceProd", g.op("Gather", g.op("Shape", x), g.const(np.asarray(list(dims), dtype=np.int64))), keepdims=0), x.dtype)
    return g.op("Mul", v, g.op("Div", n, g.op("Sub", n, g.scalar(corr, x.dtype))))


def _arg(g, op, x, dim, keepdim):
    if dim is None:
        x = g.op("Reshape", x, g.const(np.asarray([-1], dtype=np.int64)))
        y = g.op(op, x, axis=0, keepdims=0)
        if keepdim:
            y = g.op("Reshape", y, g.const(np.ones(g.out_rank(), dtype=np.int64)))
        return y
    return g.op(op, x, axis=g.axis(dim, g.rank(x)), keepdims=int(bool(keepdim)), select_last_index=0)


@exporter("aten.argmax.default", samples=[Sample(lambda x: x.argmax(-1), (_X,), emits=("ArgMax",), name="dim"),
                                          Sample(lambda x: x.argmax(), (_X,), emits=("ArgMax",), name="all")])
def argmax(g, x, dim=None, keepdim=False):
    return _arg(g, "ArgMax", x, dim, keepdim)


@exporter("aten.argmin.default", samples=[Sample(lambda x: x.argmin(1, keepdim=True), (_X,), emits=("ArgMin",))])
def argmin(g, x, dim=None, keepdim=False):
    return _arg(g, "ArgMin", x, dim, keepdim)


