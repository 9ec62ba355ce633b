"""Element-wise unary math: sqrt, rsqrt, exp, exp2, log, log1p, neg, abs, sin, cos, erf, reciprocal,
floor, ceil, sign, round, square, isnan."""

from __future__ import annotations

import torch

from onnxport import Sample, exporter

_POS = (torch.rand(2, 3, 4) + 0.1,)
_X = (torch.randn(2, 3, 4),)

#: ATen op -> (ONNX op, sample input)
_SIMPLE = {
    "sqrt": ("Sqrt", _POS), "exp": ("Exp", _X), "log": ("Log", _POS), "neg": ("Neg", _X),
    "abs": ("Abs", _X), "sin": ("Sin", _X), "cos": ("Cos", _X), "erf": ("Erf", _X),
    "reciprocal": ("Reciprocal", _POS), "floor": ("Floor", _X), "ceil": ("Ceil", _X),
    "sign": ("Sign", _X), "round": ("Round", _X), "log1p": ("Log", _POS),
}


def _unary(aten: str, onnx_op: str, args: tuple) -> None:
    fn = getattr(torch, aten)

    def prim(g, x):
        return g.op(onnx_op, x)

    prim.__name__ = prim.__qualname__ = aten
    prim.__doc__ = f"aten.{aten} -> {onnx_op}."
    prim.__module__ = __name__
    globals()[aten] = exporter(f"aten.{aten}.default", samples=[Sample(fn, args, emits=(onnx_op,))])(prim)


for _aten, (_op, _args) in _SIMPLE.items():
    if _aten != "log1p":
        _unary(_aten, _op, _args)


@exporter("aten.rsqrt.default", samples=[Sample(torch.rsqrt, _POS, emits=("Sqrt", "Reciprocal"))])
def rsqrt(g, x):
    return g.op("Reciprocal", g.op("Sqrt", x))


@exporter("aten.log1p.default", samples=[Sample(torch.log1p, _POS, emits=("Log", "Add"))])
def log1p(g, x):
    return g.op("Log", g.op("Add", x, g.scalar(1, x.dtype)))


@exporter("aten.isnan.default", samples=[Sample(lambda x: torch.isnan(x / x), (torch.tensor([0.0, 1.0, -2.0]),), emits=("IsNaN",))])
def isnan(g, x):
    return g.op("IsNaN", x)


@exporter(
    "aten.square.default",
    samples=[Sample(torch.square, _X, emits=("Mul",)),
             Sample(torch.square, (torch.randint(-5, 5, (2, 3)),), emits=("Mul",), name="int")],
)
def square(g, x):
    x = g.cast(x, g.out_dtype())
    return g.op("Mul", x, x)


@exporter(
    "aten.exp2.default",
    samples=[Sample(torch.exp2, _X, emits=("Pow",)),
             Sample(torch.exp2, (torch.randint(-5, 5, (2, 3)),), emits=("Pow", "Cast"), name="int")],
)
def exp2(g, x):
    dt = g.out_dtype()
    return g.op("Pow", g.scalar(2.0, dt), g.cast(x, dt))
