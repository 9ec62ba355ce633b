"""Boolean logic (Not, And, Or, Xor) and comparisons (Equal, Greater, Less ...), strings included."""

from __future__ import annotations

import tensorflow as tf

from onnxport import importer

from ._static import tensor


@importer("Not", since=1)
def not_(ctx, x):
    return tf.logical_not(x)


_LOGIC = {"And": tf.logical_and, "Or": tf.logical_or, "Xor": tf.math.logical_xor}


@importer("And", since=7)
@importer("Or", since=7)
@importer("Xor", since=7)
def logic(ctx, a, b):
    return _LOGIC[ctx.op_type](a, b)


_COMPARE = {
    "Equal": tf.equal,
    "Greater": tf.greater,
    "GreaterOrEqual": tf.greater_equal,
    "Less": tf.less,
    "LessOrEqual": tf.less_equal,
}


@importer("Equal", since=19)
@importer("Greater", since=13)
@importer("GreaterOrEqual", since=16)
@importer("Less", since=13)
@importer("LessOrEqual", since=16)
def compare(ctx, a, b):
    a, b = tensor(a), tensor(b)
    if a.dtype == tf.bool and ctx.op_type != "Equal":
        a, b = tf.cast(a, tf.int8), tf.cast(b, tf.int8)
    return _COMPARE[ctx.op_type](a, b)
