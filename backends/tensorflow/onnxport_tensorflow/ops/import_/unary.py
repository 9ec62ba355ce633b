"""Element-wise unary math: exp/log/roots, rounding, trigonometry, sign and float tests."""

from __future__ import annotations

import tensorflow as tf

from onnxport import importer

_SIMPLE = {
    "Exp": (13, tf.math.exp),
    "Log": (13, tf.math.log),
    "Sqrt": (13, tf.math.sqrt),
    "Floor": (13, tf.math.floor),
    "Ceil": (13, tf.math.ceil),
    "Round": (22, tf.math.round),  # half to even, as ONNX requires
    "Erf": (13, tf.math.erf),
    "Sin": (22, tf.math.sin),
    "Cos": (22, tf.math.cos),
    "Tan": (22, tf.math.tan),
    "Asin": (22, tf.math.asin),
    "Acos": (22, tf.math.acos),
    "Atan": (22, tf.math.atan),
    "Sinh": (22, tf.math.sinh),
    "Cosh": (22, tf.math.cosh),
    "Asinh": (22, tf.math.asinh),
    "Acosh": (22, tf.math.acosh),
    "Atanh": (22, tf.math.atanh),
    "Abs": (13, tf.math.abs),
    "Neg": (13, tf.math.negative),
    "Sign": (13, tf.math.sign),
}


def _unary(ctx, x):
    x = tf.convert_to_tensor(x)
    if ctx.op_type in ("Abs", "Neg", "Sign") and x.dtype.is_unsigned:
        if ctx.op_type == "Abs":
            return x
        if ctx.op_type == "Sign":
            return tf.cast(x > 0, x.dtype)
        return tf.zeros_like(x) - x
    return _SIMPLE[ctx.op_type][1](x)


for _op, (_since, _) in _SIMPLE.items():
    _unary = importer(_op, since=_since)(_unary)


@importer("Reciprocal", since=13)
def reciprocal(ctx, x):
    return tf.math.reciprocal(x)


@importer("IsNaN", since=20)
def isnan(ctx, x):
    return tf.math.is_nan(x)


@importer("IsInf", since=20)
def isinf(ctx, x, *, detect_negative, detect_positive):
    x = tf.convert_to_tensor(x)
    if detect_negative and detect_positive:
        return tf.math.is_inf(x)
    if detect_negative:
        return tf.math.is_inf(x) & (x < 0)
    if detect_positive:
        return tf.math.is_inf(x) & (x > 0)
    return tf.zeros(tf.shape(x), dtype=tf.bool)
