"""Arithmetic: add, sub, mul, div, rem, pow, max, min, atan2, integer_pow, clamp (-> Add, Sub, Mul,
Div, Mod, Pow, Max, Min, Clip ...). ``add`` of a matrix product and a bias row is a Gemm (rank 2) or
MatMul + Add of the 1-D bias."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
import onnx_ir as ir
from jax import lax

from onnxport import Sample, exporter

from ._samples import rand, randint, randn

_A, _B = randn(2, 3, 4), randn(2, 3, 4, seed=1)


def _bias_row(v: ir.Value, n) -> ir.Value | None:
    """The 1-D value of length ``n`` behind ``v``: ``v`` itself, or it reshaped / unsqueezed to
    ``(1, ..., 1, n)`` and possibly expanded (a bias broadcast along the rows)."""
    for _ in range(3):
        if v.shape is not None and len(v.shape) == 1 and v.shape[0] == n:
            return v
        node = v.producer()
        if node is None or node.domain or node.op_type not in ("Reshape", "Unsqueeze", "Expand"):
            return None
        src = node.inputs[0]
        if src is None or src.shape is None or (src.shape and src.shape[-1] != n):
            return None
        if node.op_type != "Expand" and len(src.shape) > 1:
            return None
        v = src
    return None


def _gemm(g, a, b):
    """A MatMul result (read only here) plus a bias row -> Gemm (rank 2) or MatMul + Add of the 1-D bias."""
    for i, (y, bias) in enumerate(((a, b), (b, a))):
        node = y.producer()
        row = _bias_row(bias, y.shape[-1]) if y.shape is not None and len(y.shape) else None
        if (node is None or node.op_type != "MatMul" or row is None or not g.used_once(i)
                or not g.owns(node) or y.shape is None or row.dtype != y.dtype):
            continue
        if len(y.shape) == 2:
            left, right = node.inputs
            trans_b = 0
            rnode = right.producer()
            if rnode is not None and rnode.op_type == "Transpose" and len(right.uses()) == 1 and g.owns(rnode):
                right, trans_b = rnode.inputs[0], 1
            g.remove_node(node)
            if trans_b:
                g.remove_node(rnode)
            return g.op("Gemm", left, right, row, transB=trans_b or None)
        return g.op("Add", y, row)
    return None


@exporter("lax.add", samples=[
    Sample(lambda a, b: a + b, (_A, _B), emits=("Add",)),
    Sample(lambda x, w, b: x @ w + b, (randn(3, 4), randn(4, 5), randn(5)), emits=("Gemm",), name="gemm"),
    Sample(lambda x, w, b: x @ w + b, (randn(2, 3, 4), randn(4, 5), randn(5)), emits=("MatMul", "Add"), name="matmul_add"),
])
def add(g, a, b):
    if g.out_dtype() == ir.DataType.BOOL:
        return g.op("Or", a, b)
    fused = _gemm(g, a, b)
    return fused if fused is not None else g.op("Add", a, b)


@exporter("lax.sub", samples=[Sample(lambda a, b: a - b, (_A, _B), emits=("Sub",))])
def sub(g, a, b):
    return g.op("Sub", a, b)


@exporter("lax.mul", samples=[Sample(lambda a, b: a * b, (_A, _B), emits=("Mul",)),
                              ])
def mul(g, a, b, **_):
    return g.op("And" if g.out_dtype() == ir.DataType.BOOL else "Mul", a, b)


@exporter("lax.div", samples=[Sample(lambda a, b: a / b, (_A, rand(2, 3, 4)), emits=("Div",)),
                              Sample(lambda a, b: lax.div(a, b), (randint(-9, 9, 2, 3), randint(1, 4, 2, 3)),
                                     emits=("Div",), name="int_truncates")])
def div(g, a, b):
    """Integers: truncation toward zero, as C (and onnxruntime) divide."""
    return g.op("Div", a, b)


@exporter("lax.rem", samples=[Sample(lambda a, b: lax.rem(a, b), (_A, rand(2, 3, 4)), emits=("Mod",)),
                              Sample(lambda a, b: lax.rem(a, b), (randint(-9, 9, 2, 3), randint(1, 4, 2, 3)),
                                     emits=("Mod",), name="int")])
def rem(g, a, b):
    """The sign of the dividend (C fmod)."""
    return g.op("Mod", a, b, fmod=1)


@exporter("lax.pow", samples=[Sample(lambda a, b: a ** b, (rand(2, 3), randn(2, 3)), emits=("Pow",))])
def pow_(g, a, b):
    return g.op("Pow", a, b)


@exporter("lax.max", samples=[Sample(jnp.maximum, (_A, _B), emits=("Max",)),
                              Sample(lambda x: jnp.maximum(x, 0.0), (_A,), emits=("Max",), name="scalar"),
                              Sample(jnp.maximum, (_A > 0, _B > 0), emits=("Or",), name="bool")])
def max_(g, a, b):
    return g.op("Or" if g.out_dtype() == ir.DataType.BOOL else "Max", a, b)


@exporter("lax.min", samples=[Sample(jnp.minimum, (_A, _B), emits=("Min",)),
                              Sample(jnp.minimum, (_A > 0, _B > 0), emits=("And",), name="bool")])
def min_(g, a, b):
    return g.op("And" if g.out_dtype() == ir.DataType.BOOL else "Min", a, b)


@exporter("lax.atan2", samples=[Sample(jnp.arctan2, (_A, _B), emits=("Atan", "Where"))])
def atan2(g, y, x):
    """atan(y / x), plus or minus pi where x < 0; +-pi/2 where x == 0."""
    dt = g.out_dtype()
    zero = g.scalar(0, dt)
    base = g.op("Atan", g.op("Div", y, x))
    pi = g.op("Where", g.op("Less", y, zero), g.scalar(-np.pi, dt), g.scalar(np.pi, dt))
    shifted = g.op("Where", g.op("Less", x, zero), g.op("Add", base, pi), base)
    half = g.op("Mul", g.op("Where", g.op("Less", y, zero), g.scalar(-1, dt), g.scalar(1, dt)), g.scalar(np.pi / 2, dt))
    at_zero = g.op("Where", g.op("Equal", y, zero), zero, half)
    return g.op("Where", g.op("Equal", x, zero), at_zero, shifted)


@exporter("lax.integer_pow", samples=[Sample(lambda x: x ** 3, (_A,), emits=("Mul",)),
                                      Sample(lambda x: x ** -2, (rand(2, 3),), emits=("Pow",), name="negative"),
                                      Sample(lambda x: x ** 2, (randint(-5, 5, 3, 2),), emits=("Mul",), name="int")])
def integer_pow(g, x, *, y):
    """Small positive powers as products; others through Pow."""
    if y == 0:
        return g.op("Expand", g.scalar(1, g.out_dtype()), g.op("Shape", x))
    if 1 <= y <= 4:
        out = x
        for _ in range(y - 1):
            out = g.op("Mul", out, x)
        return out if y > 1 else g.op("Identity", x)
    return g.op("Pow", x, g.scalar(y, g.out_dtype()))


@exporter("lax.clamp", samples=[Sample(lambda x: lax.clamp(-0.5, x, 0.5), (_A,), emits=("Clip",)),
                                Sample(lambda lo, x, hi: lax.clamp(lo, x, hi), (_A - 1, _A, _B + 1),
                                       emits=("Max", "Min"), name="arrays")])
def clamp(g, lo, x, hi):
    """``lax.clamp(min, x, max)`` = min(max(x, min), max): Clip for scalar bounds, else Max then Min."""
    if g.rank(lo) == 0 and g.rank(hi) == 0:
        return g.op("Clip", x, lo, hi)
    return g.op("Min", g.op("Max", x, lo), hi)
