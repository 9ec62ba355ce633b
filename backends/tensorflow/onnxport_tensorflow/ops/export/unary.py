"""Elementwise math of one tensor: Neg, Abs, Exp, Log, Log1p, Sqrt, Rsqrt, Square, Reciprocal/Inv,
Erf, Floor, Ceil, Round, Sign, Sin, Cos, LogicalNot, IsNan."""

from __future__ import annotations

import numpy as np
import tensorflow as tf

from onnxport import Sample, exporter

from ._samples import fn, rand

_X = rand(2, 3, 4)
_POS = rand(2, 3, 4, low=0.1, high=2.0)
_SAME = {"Neg": "Neg", "Abs": "Abs", "Exp": "Exp", "Log": "Log", "Sqrt": "Sqrt", "Erf": "Erf", "Floor": "Floor",
         "Ceil": "Ceil", "Sign": "Sign", "Sin": "Sin", "Cos": "Cos", "Reciprocal": "Reciprocal", "Inv": "Reciprocal",
         "LogicalNot": "Not", "IsNan": "IsNaN", "Round": "Round"}


@exporter(
    *_SAME,
    samples=[
        Sample(fn(lambda x: -x), (_X,), emits=("Neg",), name="neg"),
        Sample(fn(tf.abs), (_X,), emits=("Abs",), name="abs"),
        Sample(fn(tf.exp), (_X,), emits=("Exp",), name="exp"),
        Sample(fn(tf.math.log), (_POS,), emits=("Log",), name="log"),
        Sample(fn(tf.sqrt), (_POS,), emits=("Sqrt",), name="sqrt"),
        Sample(fn(tf.math.erf), (_X,), emits=("Erf",), name="erf"),
        Sample(fn(tf.floor), (_X * 3,), emits=("Floor",), name="floor"),
        Sample(fn(tf.math.ceil), (_X * 3,), emits=("Ceil",), name="ceil"),
        Sample(fn(tf.round), (_X * 3,), emits=("Round",), name="round"),
        Sample(fn(tf.sign), (_X,), emits=("Sign",), name="sign"),
        Sample(fn(tf.sin), (_X,), emits=("Sin",), name="sin"),
        Sample(fn(tf.cos), (_X,), emits=("Cos",), name="cos"),
        Sample(fn(tf.math.reciprocal), (_POS,), emits=("Reciprocal",), name="reciprocal"),
        Sample(fn(lambda x: tf.cast(tf.logical_not(x > 0), tf.float32)), (_X,), emits=("Not",), name="not"),
        Sample(fn(lambda x: tf.cast(tf.math.is_nan(tf.math.log(x)), tf.float32)), (_X,), emits=("IsNaN",),
               name="isnan"),
    ],
)
def unary(g, x):
    """The ONNX op of the same meaning (TF Round rounds half to even, as ONNX Round does)."""
    return g.op(_SAME[g.tf_op.type], x)


@exporter("Rsqrt", samples=[Sample(fn(tf.math.rsqrt), (_POS,), emits=("Sqrt", "Reciprocal"))])
def rsqrt(g, x):
    return g.op("Reciprocal", g.op("Sqrt", x))


@exporter("Erfc", samples=[Sample(fn(tf.math.erfc), (_X,), emits=("Erf", "Sub"))])
def erfc(g, x):
    return g.op("Sub", g.const(np.asarray(1, dtype=np.float32), x.dtype), g.op("Erf", x))


@exporter("Square", samples=[Sample(fn(tf.square), (_X,), emits=("Mul",))])
def square(g, x):
    return g.op("Mul", x, x)


@exporter("Log1p", samples=[Sample(fn(tf.math.log1p), (_POS,), emits=("Log",))])
def log1p(g, x):
    return g.op("Log", g.op("Add", x, g.const(np.asarray(1, dtype=np.float32), x.dtype)))
