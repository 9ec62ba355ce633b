"""Reductions: sum, mean, amax, amin, prod, var, std, max/min (whole or along a dim), any, all,
logsumexp, linalg_vector_norm, argmax, argmin (axes as input: newest forms)."""

from __future__ import annotations

import math

import numpy as np
import onnx_ir as ir
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
@exporter(
    "aten.sum.default",
    samples=[Sample(lambda x: x.sum(), (_X,), emits=("ReduceSum",)),
             Sample(lambda x: x.sum(dtype=torch.float64), (_X,), emits=("ReduceSum", "Cast"), name="dtype")],
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


def _var(g, x, dim, correction, keepdim):
    """mean((x - mean)^2) * n / (n - correction); inf (torch's n / 0) when n <= correction."""
    axes = _axes(g, x, dim)
    mu = g.op("ReduceMean", x, axes, keepdims=1)
    d = g.op("Sub", x, mu)
    v = g.op("ReduceMean", g.op("Mul", d, d), axes, keepdims=int(bool(keepdim)))
    corr = 1 if correction is None else correction
    if corr == 0:
        return v
    rank = g.rank(x)
    dims = [dim] if isinstance(dim, int) else dim
    dims = range(rank) if not dims else [g.axis(d, rank) for d in dims]
    sizes = [x.shape[d] for d in dims]
    if all(isinstance(s, int) for s in sizes):
        n = float(np.prod(sizes))
        return g.op("Mul", v, g.scalar(n / (n - corr) if n > corr else math.inf, x.dtype))
    n = g.cast(g.op("ReduceProd", g.op("Gather", g.op("Shape", x), g.const(np.asarray(list(dims), dtype=np.int64))), keepdims=0), x.dtype)
    return g.op("Mul", v, g.op("Div", n, g.op("Sub", n, g.scalar(corr, x.dtype))))


@exporter(
    "aten.var.correction",
    samples=[Sample(lambda x: x.var(-1, keepdim=True), (_X,), emits=("ReduceMean",), name="unbiased"),
             Sample(lambda x: x.var((0, 2), unbiased=False), (_X,), emits=("ReduceMean",), name="biased")],
)
def var(g, x, dim=None, *, correction=None, keepdim=False):
    return _var(g, x, dim, correction, keepdim)


@exporter(
    "aten.var.dim",
    samples=[Sample(lambda x: x.var(1, unbiased=False), (_X,), emits=("ReduceMean",)),
             Sample(lambda x: x.var((0, 2), True, True), (_X,), emits=("ReduceMean", "Mul"), name="unbiased")],
)
def var_dim(g, x, dim=None, unbiased=True, keepdim=False):
    return _var(g, x, dim, int(bool(unbiased)), keepdim)


@exporter(
    "aten.std.correction",
    samples=[Sample(lambda x: x.std(), (_X,), emits=("ReduceMean", "Sqrt"), name="all"),
             Sample(lambda x: x.std(1, correction=2, keepdim=True), (_X,), emits=("ReduceMean", "Sqrt"), name="correction")],
)
def std(g, x, dim=None, *, correction=None, keepdim=False):
    return g.op("Sqrt", _var(g, x, dim, correction, keepdim))


@exporter(
    "aten.std.dim",
    samples=[Sample(lambda x: x.std(-1), (_X,), emits=("ReduceMean", "Sqrt")),
             Sample(lambda x: x.std((0, 1), unbiased=False), (_X,), emits=("ReduceMean", "Sqrt"), name="biased")],
)
def std_dim(g, x, dim=None, unbiased=True, keepdim=False):
    return g.op("Sqrt", _var(g, x, dim, int(bool(unbiased)), keepdim))


def _reducible(g, x):
    """``x`` in a type ReduceMax/ReduceMin/ArgMax take (booleans as uint8) and the way back."""
    if x.dtype == ir.DataType.BOOL:
        return g.cast(x, ir.DataType.UINT8), lambda y: g.op("Cast", y, to=ir.DataType.BOOL)
    return x, lambda y: y


def _extreme_dim(g, reduce_op, arg_op, x, dim, keepdim):
    """(values, indices) along ``dim``; the first index among equal extremes, as torch."""
    rank = g.rank(x)
    if rank == 0:  # dim 0 / -1 of a 0-d tensor: the value itself, index 0
        return g.op("Identity", x), g.const(np.asarray(0, dtype=np.int64))
    axis = g.axis(dim, rank)
    y, back = _reducible(g, x)
    values = g.op(reduce_op, y, g.const(np.asarray([axis], dtype=np.int64)), keepdims=int(bool(keepdim)))
    indices = g.op(arg_op, y, axis=axis, keepdims=int(bool(keepdim)), select_last_index=0)
    return back(values), indices


@exporter(
    "aten.max.dim",
    samples=[Sample(lambda x: x.max(1), (_X,), emits=("ReduceMax", "ArgMax")),
             Sample(lambda x: x.max(-1, keepdim=True).values, (_X,), emits=("ReduceMax",), name="keepdim"),
             Sample(lambda b: b.max(0), (torch.tensor([[True, False], [False, False]]),), emits=("ArgMax",), name="bool")],
)
def max_dim(g, x, dim, keepdim=False):
    return _extreme_dim(g, "ReduceMax", "ArgMax", x, dim, keepdim)


@exporter(
    "aten.min.dim",
    samples=[Sample(lambda x: x.min(0), (_X,), emits=("ReduceMin", "ArgMin")),
             Sample(lambda i: i.min(1, keepdim=True), (torch.randint(0, 99, (2, 5)),), emits=("ReduceMin", "ArgMin"), name="int")],
)
def min_dim(g, x, dim, keepdim=False):
    return _extreme_dim(g, "ReduceMin", "ArgMin", x, dim, keepdim)


@exporter("aten.max.default", samples=[Sample(lambda x: x.max(), (_X,), emits=("ReduceMax",))])
def max_all(g, x):
    y, back = _reducible(g, x)
    return back(g.op("ReduceMax", y, keepdims=0))


@exporter("aten.min.default", samples=[Sample(lambda x: x.min(), (_X,), emits=("ReduceMin",)),
                                       Sample(lambda b: (b > 0).min(), (_X,), emits=("ReduceMin",), name="bool")])
def min_all(g, x):
    y, back = _reducible(g, x)
    return back(g.op("ReduceMin", y, keepdims=0))


def _any_all(g, op, x, dim, keepdim):
    """Max (any) / Min (all) of the truth values as uint8; the result is bool (uint8 for uint8
    inputs, as torch)."""
    y = g.cast(g.cast(x, ir.DataType.BOOL), ir.DataType.UINT8)
    return g.cast(g.op(op, y, _axes(g, x, dim), keepdims=int(bool(keepdim))), g.out_dtype())


@exporter(
    "aten.any.dim",
    samples=[Sample(lambda x: (x > 0).any(1), (_X,), emits=("ReduceMax",)),
             Sample(lambda x: x.any(-1, keepdim=True), (_X,), emits=("ReduceMax",), name="float")],
)
@exporter("aten.any.dims", samples=[Sample(lambda x: (x > 0).any((0, 2)), (_X,), emits=("ReduceMax",))])
@exporter("aten.any.default", samples=[Sample(lambda i: i.any(), (torch.randint(0, 2, (3, 4), dtype=torch.uint8),), emits=("ReduceMax",))])
def any_true(g, x, dim=None, keepdim=False):
    return _any_all(g, "ReduceMax", x, dim, keepdim)


@exporter("aten.all.default", samples=[Sample(lambda x: (x > -1).all(), (_X,), emits=("ReduceMin",))])
@exporter("aten.all.dim", samples=[Sample(lambda x: (x > -1).all(1, keepdim=True), (_X,), emits=("ReduceMin",))])
@exporter("aten.all.dims", samples=[Sample(lambda x: x.all((0, 1)), (torch.randint(0, 3, (3, 4, 2)),), emits=("ReduceMin",))])
def all_true(g, x, dim=None, keepdim=False):
    return _any_all(g, "ReduceMin", x, dim, keepdim)


@exporter(
    "aten.logsumexp.default",
    samples=[Sample(lambda x: x.logsumexp(1), (_X,), emits=("ReduceLogSumExp",)),
             Sample(lambda x: (x * 100).logsumexp((0, 2), keepdim=True), (_X,), emits=("ReduceLogSumExp",), name="large")],
)
def logsumexp(g, x, dim, keepdim=False):
    return _reduce(g, "ReduceLogSumExp", g.cast(x, g.out_dtype()), dim, keepdim)


@exporter(
    "aten.linalg_vector_norm.default",
    samples=[Sample(lambda x: x.norm(dim=1), (_X,), emits=("ReduceL2",), name="l2"),
             Sample(lambda x: x.norm(), (_X,), emits=("ReduceL2",), name="all"),
             Sample(lambda x: x.norm(p=1, dim=(0, 2), keepdim=True), (_X,), emits=("ReduceL1",), name="l1"),
             Sample(lambda x: torch.linalg.vector_norm(x, float("inf"), -1), (_X,), emits=("ReduceMax", "Abs"), name="inf"),
             Sample(lambda x: torch.linalg.vector_norm(x, float("-inf")), (_X,), emits=("ReduceMin", "Abs"), name="neg_inf"),
             Sample(lambda x: torch.linalg.vector_norm(x.round(), 0, 1), (_X,), emits=("ReduceSum",), name="zero"),
             Sample(lambda x: torch.linalg.vector_norm(x, 3, 1, dtype=torch.float64), (_X,), emits=("Pow", "ReduceSum"), name="p")],
)
def linalg_vector_norm(g, x, ord=2, dim=None, keepdim=False, *, dtype=None):  # noqa: A002 - the ATen name
    dt = g.out_dtype()
    x = g.cast(x, dt)
    axes = _axes(g, x, dim)
    keep = int(bool(keepdim))
    if ord == 2:
        return g.op("ReduceL2", x, axes, keepdims=keep)
    if ord == 1:
        return g.op("ReduceL1", x, axes, keepdims=keep)
    if ord == math.inf:
        return g.op("ReduceMax", g.op("Abs", x), axes, keepdims=keep)
    if ord == -math.inf:
        return g.op("ReduceMin", g.op("Abs", x), axes, keepdims=keep)
    if ord == 0:
        nonzero = g.cast(g.op("Not", g.op("Equal", x, g.scalar(0, dt))), dt)
        return g.op("ReduceSum", nonzero, axes, keepdims=keep)
    powered = g.op("Pow", g.op("Abs", x), g.scalar(float(ord), dt))
    return g.op("Pow", g.op("ReduceSum", powered, axes, keepdims=keep), g.scalar(1.0 / ord, dt))


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


