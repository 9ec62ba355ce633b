"""Broadcasting binary arithmetic (Add, Sub, Mul, Div, Pow, Mod) and the variadic Sum/Mean/Max/Min."""

from __future__ import annotations

import functools

import tensorflow as tf

from onnxport import importer


def _t(x):
    return tf.convert_to_tensor(x)


def _is_int(x) -> bool:
    return x.dtype.is_integer


@importer("Add", since=14)
def add(ctx, a, b):
    return tf.add(_t(a), _t(b))


@importer("Sub", since=14)
def sub(ctx, a, b):
    return tf.subtract(_t(a), _t(b))


@importer("Mul", since=14)
def mul(ctx, a, b):
    return tf.multiply(_t(a), _t(b))


@importer("Div", since=14)
def div(ctx, a, b):
    a, b = _t(a), _t(b)
    if _is_int(a):
        return tf.truncatediv(a, b)  # C semantics: integer division truncates toward zero
    return tf.divide(a, b)


@importer("Pow", since=15)
def pow_(ctx, x, y):
    x, y = _t(x), _t(y)
    if _is_int(x):
        if not _is_int(y):
            # integer base, float exponent: compute in the exponent's type, truncate back
            return tf.cast(tf.pow(tf.cast(x, y.dtype), y), x.dtype)
        x64, y64 = tf.cast(x, tf.int64), tf.cast(y, tf.int64)
        pos = tf.pow(x64, tf.maximum(y64, 0))
        # a negative integer power is 1/x**n truncated: nonzero only for |x| == 1
        odd = tf.math.floormod(y64, 2) != 0
        one = tf.ones_like(pos)
        neg = tf.where(x64 == 1, one, tf.where(x64 == -1, tf.where(odd, -one, one), tf.zeros_like(pos)))
        return tf.cast(tf.where(y64 < 0, neg, pos), x.dtype)
    if _is_int(y):
        return tf.pow(x, tf.cast(y, x.dtype))
    wide = tf.float64 if tf.float64 in (x.dtype, y.dtype) else x.dtype
    return tf.cast(tf.pow(tf.cast(x, wide), tf.cast(y, wide)), x.dtype)


@importer("Mod", since=28)
def mod(ctx, a, b, *, fmod):
    a, b = _t(a), _t(b)
    if fmod:
        if _is_int(a):
            return tf.truncatemod(a, b)  # sign of the dividend
        return tf.math.truncatemod(a, b)
    return tf.math.floormod(a, b)  # sign of the divisor


def _variadic(fn, xs):
    return functools.reduce(fn, [_t(x) for x in xs[1:]], _t(xs[0]))


@importer("Sum", since=13)
def sum_(ctx, *xs):
    return _variadic(tf.add, xs)


@importer("Mean", since=13)
def mean(ctx, *xs):
    total = _variadic(tf.add, xs)
    return tf.cast(total / tf.cast(len(xs), total.dtype), total.dtype)


@importer("Max", since=13)
def max_(ctx, *xs):
    return _variadic(tf.maximum, xs)


@importer("Min", since=13)
def min_(ctx, *xs):
    return _variadic(tf.minimum, xs)
