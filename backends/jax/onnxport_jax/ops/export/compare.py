"""Comparisons and logic: eq, ne, lt, le, gt, ge, and, or, xor, not, is_finite (-> Equal, Less ...,
And/Or/Xor/Not on booleans, BitwiseAnd/Or/Xor/Not on integers, IsNaN/IsInf)."""

from __future__ import annotations

import jax.numpy as jnp
import onnx_ir as ir

from onnxport import Sample, exporter

from ._samples import randint, randn

_A, _B = randn(2, 3, 4), randn(2, 3, 4, seed=1)
_I, _J = randint(-4, 4, 3, 4), randint(-4, 4, 3, 4, seed=1)


@exporter("lax.eq", samples=[Sample(lambda a, b: a == b, (_I, _J), emits=("Equal",))])
def eq(g, a, b):
    return g.op("Equal", a, b)


@exporter("lax.ne", samples=[Sample(lambda a, b: a != b, (_I, _J), emits=("Equal", "Not"))])
def ne(g, a, b):
    return g.op("Not", g.op("Equal", a, b))


@exporter("lax.lt", samples=[Sample(lambda a, b: a < b, (_A, _B), emits=("Less",))])
def lt(g, a, b, **_):
    return g.op("Less", a, b)


@exporter("lax.le", samples=[Sample(lambda a, b: a <= b, (_A, _B), emits=("LessOrEqual",))])
def le(g, a, b, **_):
    return g.op("LessOrEqual", a, b)


@exporter("lax.gt", samples=[Sample(lambda a, b: a > b, (_A, _B), emits=("Greater",))])
def gt(g, a, b, **_):
    return g.op("Greater", a, b)


@exporter("lax.ge", samples=[Sample(lambda a, b: a >= b, (_A, _B), emits=("GreaterOrEqual",))])
def ge(g, a, b, **_):
    return g.op("GreaterOrEqual", a, b)


def _logic(name: str, logical: str, bitwise: str, fn) -> None:
    def prim(g, *xs):
        return g.op(logical if g.out_dtype() == ir.DataType.BOOL else bitwise, *xs)

    prim.__name__ = prim.__qualname__ = f"{name}_"
    prim.__doc__ = f"lax.{name} -> {logical} (booleans), {bitwise} (integers)."
    prim.__module__ = __name__
    n = 1 if name == "not" else 2
    samples = [Sample(fn, (_A > 0, _B > 0)[:n], emits=(logical,)),
               Sample(fn, (_I, _J)[:n], emits=(bitwise,), name="int")]
    globals()[f"{name}_"] = exporter(f"lax.{name}", samples=samples)(prim)


_logic("and", "And", "BitwiseAnd", lambda a, b: a & b)
_logic("or", "Or", "BitwiseOr", lambda a, b: a | b)
_logic("xor", "Xor", "BitwiseXor", lambda a, b: a ^ b)
_logic("not", "Not", "BitwiseNot", lambda a: ~a)


@exporter("lax.is_finite", samples=[Sample(lambda x: jnp.isfinite(jnp.log(x)), (_A,), emits=("IsNaN", "IsInf"))])
def is_finite(g, x):
    return g.op("Not", g.op("Or", g.op("IsNaN", x), g.op("IsInf", x)))
