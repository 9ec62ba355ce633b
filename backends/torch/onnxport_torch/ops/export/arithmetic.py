"""Arithmetic: add, sub, rsub, mul, div, floor_divide, pow, remainder, maximum, minimum, addcmul,
addcdiv, lerp, diff.

Operands are cast to the traced result's dtype (torch's type promotion), Python numbers become
constants of that dtype.
"""

from __future__ import annotations

import numpy as np
import onnx_ir as ir
import torch

from onnxport import Sample, exporter

_A, _B = torch.randn(2, 3, 4), torch.randn(3, 4)
_INT = torch.randint(-9, 9, (2, 5))
_INT64_MAX = 2**63 - 1
_FLOATS = (ir.DataType.FLOAT, ir.DataType.DOUBLE, ir.DataType.FLOAT16, ir.DataType.BFLOAT16)


def _operands(g, a, b):
    dt = g.out_dtype()
    return g.tensor(a, dt), g.tensor(b, dt)


@exporter(
    "aten.add.Tensor",
    samples=[Sample(torch.add, (_A, _B), emits=("Add",), name="tensor"),
             Sample(lambda x, y: torch.add(x, y, alpha=2), (_A, _B), emits=("Add", "Mul"), name="alpha"),
             Sample(lambda x: x + 3, (_INT,), emits=("Add",), name="int_scalar"),
             Sample(lambda a, b: (a > 0) + (b > 0), (_A, _B), emits=("Or",), name="bool")],
)
def add(g, a, b, *, alpha=1):
    a, b = _operands(g, a, b)
    if g.out_dtype() == ir.DataType.BOOL:  # ONNX Add has no bool form: logical or
        return g.op("Or", a, b)
    if alpha != 1:
        b = g.op("Mul", b, g.scalar(alpha, g.out_dtype()))
    return g.op("Add", a, b)


@exporter(
    "aten.sub.Tensor",
    samples=[Sample(torch.sub, (_A, _B), emits=("Sub",)),
             Sample(lambda x: 1.0 - x, (_A,), emits=("Sub",), name="rsub")],
)
def sub(g, a, b, *, alpha=1):
    a, b = _operands(g, a, b)
    if alpha != 1:
        b = g.op("Mul", b, g.scalar(alpha, g.out_dtype()))
    return g.op("Sub", a, b)


@exporter("aten.rsub.Tensor", samples=[Sample(lambda x, y: torch.rsub(x, y), (_A, _B), emits=("Sub",))])
@exporter(
    "aten.rsub.Scalar",
    samples=[Sample(lambda x: 1 - x, (_A,), emits=("Sub",)),
             Sample(lambda i: torch.rsub(i, 2.5, alpha=2), (_INT,), emits=("Sub", "Mul"), name="alpha")],
)
def rsub(g, a, b, alpha=1):
    """b - alpha * a."""
    return sub(g, b, a, alpha=alpha)


@exporter(
    "aten.mul.Tensor",
    samples=[Sample(torch.mul, (_A, _B), emits=("Mul",)),
             Sample(lambda x: x * 0.5, (_INT,), emits=("Mul", "Cast"), name="int_times_float"),
             Sample(lambda a, b: (a > 0) * (b > 0), (_A, _B), emits=("And",), name="bool")],
)
def mul(g, a, b):
    if g.out_dtype() == ir.DataType.BOOL:  # ONNX Mul has no bool form: logical and
        return g.op("And", *_operands(g, a, b))
    return g.op("Mul", *_operands(g, a, b))


@exporter(
    "aten.div.Tensor", "aten.div.Tensor_mode",
    samples=[Sample(torch.div, (_A, _B + 3), emits=("Div",)),
             Sample(lambda x: torch.div(x, 4, rounding_mode="floor"), (_INT,), emits=("Div",), name="int_floor"),
             Sample(lambda x: torch.div(x, 4, rounding_mode="trunc"), (_INT,), emits=("Div",), name="int_trunc"),
             Sample(lambda x: torch.div(x, 0.3, rounding_mode="floor"), (_A,), emits=("Floor",), name="float_floor"),
             Sample(lambda x: torch.div(x, 0.3, rounding_mode="trunc"), (_A,), emits=("Div",), name="float_trunc")],
)
def div(g, a, b, *, rounding_mode=None):
    """True division in the result type; floor/trunc rounding for floats and integers."""
    dt = g.out_dtype()
    if rounding_mode is None:
        return g.op("Div", g.tensor(a, dt), g.tensor(b, dt))
    if dt in _FLOATS:
        q = g.op("Div", g.tensor(a, dt), g.tensor(b, dt))
        if rounding_mode == "floor":
            return g.op("Floor", q)
        return g.op("Mul", g.op("Sign", q), g.op("Floor", g.op("Abs", q)))
    a, b = g.tensor(a, dt), g.tensor(b, dt)
    q = g.op("Div", a, b)  # ONNX integer Div truncates toward zero
    if rounding_mode == "trunc":
        return q
    # floor: one less where the remainder is nonzero and the signs differ
    r = g.op("Sub", a, g.op("Mul", q, b))
    zero = g.scalar(0, dt)
    fix = g.op("And", g.op("Not", g.op("Equal", r, zero)),
               g.op("Xor", g.op("Less", a, zero), g.op("Less", b, zero)))
    return g.op("Sub", q, g.op("Cast", fix, to=dt))


@exporter(
    "aten.floor_divide.default",
    samples=[Sample(lambda x: x // 4, (_INT,), emits=("Div",), name="int"),
             Sample(lambda x, y: x // y, (_A, _B + 3), emits=("Floor",), name="float")],
)
def floor_divide(g, a, b):
    return div(g, a, b, rounding_mode="floor")


@exporter(
    "aten.pow.Tensor_Scalar", "aten.pow.Tensor_Tensor", "aten.pow.Scalar",
    samples=[Sample(lambda x: x.abs() ** 1.5, (_A,), emits=("Pow",), name="tensor_scalar"),
             Sample(torch.pow, (_A.abs() + 0.1, _B), emits=("Pow",), name="tensor_tensor"),
             Sample(lambda x: 2.0 ** x, (_A,), emits=("Pow",), name="scalar")],
)
def pow(g, a, b):  # noqa: A001 - the ATen name
    return g.op("Pow", *_operands(g, a, b))


@exporter(
    "aten.remainder.Tensor", "aten.remainder.Scalar",
    samples=[Sample(lambda x: x % 3, (_INT,), emits=("Mod",), name="int"),
             Sample(lambda x: torch.remainder(x, 0.7), (_A,), emits=("Mod",), name="float")],
)
def remainder(g, a, b):
    """Python-style modulo: the result has the divisor's sign (Mod with fmod=0; floats need fmod)."""
    a, b = _operands(g, a, b)
    if g.out_dtype() not in _FLOATS:
        return g.op("Mod", a, b, fmod=0)
    r = g.op("Mod", a, b, fmod=1)
    zero = g.scalar(0, g.out_dtype())
    fix = g.op("And", g.op("Not", g.op("Equal", r, zero)),
               g.op("Xor", g.op("Less", r, zero), g.op("Less", b, zero)))
    return g.op("Where", fix, g.op("Add", r, b), r)


@exporter("aten.maximum.default", samples=[Sample(torch.maximum, (_A, _B), emits=("Max",))])
@exporter("aten.max.other", samples=[Sample(torch.max, (_A, _B), emits=("Max",))])
def maximum(g, a, b):
    return g.op("Max", *_operands(g, a, b))


@exporter("aten.minimum.default", samples=[Sample(torch.minimum, (_A, _B), emits=("Min",))])
@exporter("aten.min.other", samples=[Sample(torch.min, (_INT, _INT[:1]), emits=("Min",))])
def minimum(g, a, b):
    return g.op("Min", *_operands(g, a, b))


def _scaled(g, x, value, dt):
    return x if value == 1 else g.op("Mul", x, g.tensor(value, dt))


@exporter(
    "aten.addcmul.default",
    samples=[Sample(lambda x, a, b: torch.addcmul(x, a, b), (_A, _B, _B), emits=("Mul", "Add")),
             Sample(lambda x, a, b: torch.addcmul(x, a, b, value=0.5), (_A, _A, _B), emits=("Mul", "Add"), name="value")],
)
def addcmul(g, x, t1, t2, *, value=1):
    """x + value * (t1 * t2)."""
    dt = g.out_dtype()
    return g.op("Add", g.cast(x, dt), _scaled(g, g.op("Mul", g.cast(t1, dt), g.cast(t2, dt)), value, dt))


@exporter(
    "aten.addcdiv.default",
    samples=[Sample(lambda x, a, b: torch.addcdiv(x, a, b, value=-2), (_A, _B, _B.abs() + 1), emits=("Div", "Add"))],
)
def addcdiv(g, x, t1, t2, *, value=1):
    """x + value * (t1 / t2)."""
    dt = g.out_dtype()
    return g.op("Add", g.cast(x, dt), _scaled(g, g.op("Div", g.cast(t1, dt), g.cast(t2, dt)), value, dt))


@exporter(
    "aten.lerp.Scalar",
    samples=[Sample(lambda a, b: torch.lerp(a, b, 0.3), (_A, _B), emits=("Sub", "Mul", "Add"), name="low"),
             Sample(lambda a, b: torch.lerp(a, b, 0.75), (_A, _B), emits=("Sub", "Mul"), name="high")],
)
@exporter(
    "aten.lerp.Tensor",
    samples=[Sample(torch.lerp, (_A, _B, torch.rand(3, 4) * 2 - 0.5), emits=("Where",))],
)
def lerp(g, start, end, weight):
    """As torch computes it: start + w * (end - start) where |w| < 0.5, else
    end - (end - start) * (1 - w)."""
    dt = g.out_dtype()
    start, end = g.cast(start, dt), g.cast(end, dt)
    diff = g.op("Sub", end, start)
    if not isinstance(weight, ir.Value):
        if abs(weight) < 0.5:
            return g.op("Add", start, g.op("Mul", g.scalar(weight, dt), diff))
        return g.op("Sub", end, g.op("Mul", diff, g.scalar(1 - weight, dt)))
    w = g.cast(weight, dt)
    low = g.op("Add", start, g.op("Mul", w, diff))
    high = g.op("Sub", end, g.op("Mul", diff, g.op("Sub", g.scalar(1, dt), w)))
    return g.op("Where", g.op("Less", g.op("Abs", w), g.scalar(0.5, dt)), low, high)


@exporter(
    "aten.diff.default",
    samples=[Sample(lambda x: torch.diff(x), (_A,), emits=("Slice", "Sub")),
             Sample(lambda x, p: torch.diff(x, 2, dim=0, prepend=p, append=p), (_A, _A[:1]), emits=("Concat", "Sub"), name="n2_prepend"),
             Sample(lambda b: torch.diff(b, dim=1), (_A > 0,), emits=("Xor",), name="bool")],
)
def diff(g, x, n=1, dim=-1, prepend=None, append=None):
    """n rounds of x[1:] - x[:-1] along ``dim`` (``!=`` for booleans), after the concatenation."""
    dt = g.out_dtype()
    axis = g.axis(dim, g.rank(x))
    parts = [g.cast(p, dt) for p in (prepend, x, append) if p is not None]
    y = parts[0] if len(parts) == 1 else g.op("Concat", *parts, axis=axis)
    axes = g.const(np.asarray([axis], dtype=np.int64))
    one, minus_one = g.const(np.asarray([1], dtype=np.int64)), g.const(np.asarray([-1], dtype=np.int64))
    start, end = g.const(np.asarray([0], dtype=np.int64)), g.const(np.asarray([_INT64_MAX], dtype=np.int64))
    for _ in range(n):
        hi = g.op("Slice", y, one, end, axes)
        lo = g.op("Slice", y, start, minus_one, axes)
        y = g.op("Xor" if dt == ir.DataType.BOOL else "Sub", hi, lo)
    return y
