"""Equal, NotEqual, Less, LessEqual, Greater, GreaterEqual, LogicalAnd, LogicalOr -> comparisons."""

from __future__ import annotations

import tensorflow as tf

from onnxport import Sample, exporter

from ._samples import fn, rand

_OPS = {"Equal": "Equal", "Less": "Less", "LessEqual": "LessOrEqual", "Greater": "Greater",
        "GreaterEqual": "GreaterOrEqual", "LogicalAnd": "And", "LogicalOr": "Or"}
_A, _B = rand(2, 4), rand(4)


def _f(op):
    return fn(lambda a, b: tf.cast(op(a, b), tf.float32))


@exporter(
    *_OPS, "NotEqual",
    samples=[Sample(_f(tf.equal), (_A, _A), emits=("Equal",), name="equal"),
             Sample(_f(tf.not_equal), (_A, _B), emits=("Not",), name="not_equal"),
             Sample(_f(tf.less), (_A, _B), emits=("Less",), name="less"),
             Sample(_f(tf.less_equal), (_A, _B), emits=("LessOrEqual",), name="less_equal"),
             Sample(_f(tf.greater), (_A, _B), emits=("Greater",), name="greater"),
             Sample(_f(tf.greater_equal), (_A, _B), emits=("GreaterOrEqual",), name="greater_equal"),
             Sample(_f(lambda a, b: tf.logical_and(a > 0, b > 0)), (_A, _B), emits=("And",), name="and"),
             Sample(_f(lambda a, b: tf.logical_or(a > 0, b > 0)), (_A, _B), emits=("Or",), name="or")],
)
def compare(g, a, b):
    if g.tf_op.type == "NotEqual":
        return g.op("Not", g.op("Equal", a, b))
    return g.op(_OPS[g.tf_op.type], a, b)
