"""Broadcasting binary arithmetic (Add, Sub, Mul, Div, Pow, Mod) and the variadic Sum/Mean/Max/Min."""

from __future__ import annotations

import functools

import jax.numpy as jnp
from jax import lax

from onnxport import importer


def _is_int(x) -> bool:
    return jnp.issubdtype(x.dtype, jnp.integer)


@importer("Add", since=14)
def add(ctx, a, b):
    return jnp.add(a, b)


@importer("Sub", since=14)
def sub(ctx, a, b):
    return jnp.subtract(a, b)


@importer("Mul", since=14)
def mul(ctx, a, b):
    return jnp.multiply(a, b)


@importer("Div", since=14)
def div(ctx, a, b):
    if _is_int(a):
        # C semantics: integer division truncates toward zero
        a, b = jnp.broadcast_arrays(a, b)
        return lax.div(a, b)
    return jnp.divide(a, b)


@importer("Pow", since=15)
def pow_(ctx, x, y):
    if _is_int(x):
        if not _is_int(y):
            # integer base, float exponent: compute in the exponent's type, truncate back
            return jnp.power(x.astype(y.dtype), y).astype(x.dtype)
        out, wide = x.dtype, jnp.promote_types(x.dtype, y.dtype)
        x, y = x.astype(wide), y.astype(wide)
        pos = jnp.power(x, jnp.maximum(y, 0))
        # a negative integer power is 1/x**n truncated: nonzero only for |x| == 1
        odd = (y % 2) != 0
        neg = jnp.where(x == 1, 1, jnp.where(x == -1, jnp.where(odd, -1, 1), 0)).astype(wide)
        return jnp.where(y < 0, neg, pos).astype(out)
    if _is_int(y):
        return jnp.power(x, y).astype(x.dtype)
    wide = jnp.promote_types(x.dtype, y.dtype)
    return jnp.power(x.astype(wide), y.astype(wide)).astype(x.dtype)


@importer("Mod", since=28)
def mod(ctx, a, b, *, fmod):
    if fmod:
        if _is_int(a):
            a, b = jnp.broadcast_arrays(a, b)
            return lax.rem(a, b)  # sign of the dividend
        return jnp.fmod(a, b)
    return jnp.mod(a, b)  # sign of the divisor


def _variadic(fn, xs):
    return functools.reduce(fn, xs[1:], xs[0])


@importer("Sum", since=13)
def sum_(ctx, *xs):
    return _variadic(jnp.add, xs)


@importer("Mean", since=13)
def mean(ctx, *xs):
    total = _variadic(jnp.add, xs)
    return (total / len(xs)).astype(total.dtype)


@importer("Max", since=13)
def max_(ctx, *xs):
    return _variadic(jnp.maximum, xs)


@importer("Min", since=13)
def min_(ctx, *xs):
    return _variadic(jnp.minimum, xs)
