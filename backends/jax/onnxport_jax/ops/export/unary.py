"""Element-wise unary math: exp, exp2, log, log1p, expm1, neg, abs, sign, floor, ceil, round, sqrt,
rsqrt, cbrt, square, sin, cos, tan, asin, acos, atan, sinh, cosh, asinh, acosh, atanh, erf, erfc."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from onnxport import Sample, exporter

from ._samples import rand, randn

_X = (randn(2, 3, 4),)
_POS = (rand(2, 3, 4),)
_UNIT = (rand(2, 3, 4, low=-0.9, high=0.9),)
_BIG = (rand(2, 3, 4, low=1.1, high=3.0),)

#: JAX primitive -> (ONNX op, sample function, sample inputs)
_SIMPLE = {
    "exp": ("Exp", jnp.exp, _X), "log": ("Log", jnp.log, _POS), "neg": ("Neg", jnp.negative, _X),
    "abs": ("Abs", jnp.abs, _X), "sign": ("Sign", jnp.sign, _X), "floor": ("Floor", jnp.floor, _X),
    "ceil": ("Ceil", jnp.ceil, _X), "sqrt": ("Sqrt", jnp.sqrt, _POS), "sin": ("Sin", jnp.sin, _X),
    "cos": ("Cos", jnp.cos, _X), "tan": ("Tan", jnp.tan, _UNIT), "asin": ("Asin", jnp.arcsin, _UNIT),
    "acos": ("Acos", jnp.arccos, _UNIT), "atan": ("Atan", jnp.arctan, _X), "sinh": ("Sinh", jnp.sinh, _X),
    "cosh": ("Cosh", jnp.cosh, _X), "asinh": ("Asinh", jnp.arcsinh, _X), "acosh": ("Acosh", jnp.arccosh, _BIG),
    "atanh": ("Atanh", jnp.arctanh, _UNIT), "erf": ("Erf", lax.erf, _X),
}


def _unary(name: str, onnx_op: str, fn, args) -> None:
    def prim(g, x, **_):
        return g.op(onnx_op, x)

    prim.__name__ = prim.__qualname__ = name
    prim.__doc__ = f"lax.{name} -> {onnx_op}."
    prim.__module__ = __name__
    globals()[name] = exporter(f"lax.{name}", samples=[Sample(fn, args, emits=(onnx_op,))])(prim)


for _name, (_op, _fn, _args) in _SIMPLE.items():
    _unary(_name, _op, _fn, _args)


@exporter("lax.rsqrt", samples=[Sample(lax.rsqrt, _POS, emits=("Sqrt", "Reciprocal"))])
def rsqrt(g, x, **_):
    return g.op("Reciprocal", g.op("Sqrt", x))


@exporter("lax.log1p", samples=[Sample(jnp.log1p, _POS, emits=("Log", "Add"))])
def log1p(g, x, **_):
    return g.op("Log", g.op("Add", x, g.scalar(1, g.out_dtype())))


@exporter("lax.expm1", samples=[Sample(jnp.expm1, _X, emits=("Exp", "Sub"))])
def expm1(g, x, **_):
    return g.op("Sub", g.op("Exp", x), g.scalar(1, g.out_dtype()))


@exporter("lax.exp2", samples=[Sample(jnp.exp2, _X, emits=("Pow",))])
def exp2(g, x, **_):
    return g.op("Pow", g.scalar(2.0, g.out_dtype()), x)


@exporter("lax.cbrt", samples=[Sample(jnp.cbrt, _X, emits=("Pow", "Sign"))])
def cbrt(g, x, **_):
    """sign(x) * |x| ** (1/3)."""
    dt = g.out_dtype()
    return g.op("Mul", g.op("Sign", x), g.op("Pow", g.op("Abs", x), g.scalar(1 / 3, dt)))


@exporter("lax.square", samples=[Sample(jnp.square, _X, emits=("Mul",))])
def square(g, x, **_):
    return g.op("Mul", x, x)


@exporter("lax.erfc", samples=[Sample(lax.erfc, _X, emits=("Erf", "Sub")),
                               Sample(lambda x: jax.nn.gelu(x, approximate=False), _X, emits=("Erf",), name="gelu")])
def erfc(g, x, **_):
    return g.op("Sub", g.scalar(1, g.out_dtype()), g.op("Erf", x))


@exporter("lax.round", samples=[
    Sample(jnp.round, (jnp.asarray([-2.5, -1.5, -0.5, 0.5, 1.5, 2.4, 2.6]),), emits=("Round",)),
    Sample(lambda x: lax.round(x, lax.RoundingMethod.AWAY_FROM_ZERO),
           (jnp.asarray([-2.5, -1.5, -0.5, 0.5, 1.5, 2.4, 2.6]),), emits=("Floor", "Sign"), name="away_from_zero"),
])
def round_(g, x, *, rounding_method=0):
    """Half to even is ONNX Round; half away from zero is sign(x) * floor(|x| + 0.5)."""
    if int(rounding_method) == int(lax.RoundingMethod.TO_NEAREST_EVEN):
        return g.op("Round", x)
    dt = g.out_dtype()
    return g.op("Mul", g.op("Sign", x), g.op("Floor", g.op("Add", g.op("Abs", x), g.scalar(0.5, dt))))


_ = np
