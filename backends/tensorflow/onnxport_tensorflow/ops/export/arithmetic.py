"""Binary arithmetic: AddV2/Add, Sub, Mul, RealDiv/Div, FloorDiv, FloorMod, Maximum, Minimum, Pow,
SquaredDifference, BiasAdd, AddN (-> Add, Sub, Mul, Div, Floor, Mod, Max, Min, Pow, Sum).

TF broadcasts as ONNX does (numpy rules) and both operands already have the result's dtype.
"""

from __future__ import annotations

import onnx_ir as ir
import tensorflow as tf

from onnxport import Sample, exporter

from ._samples import fn, ints, rand

_A, _B = rand(2, 3, 4), rand(3, 4)
_FLOATS = (ir.DataType.FLOAT, ir.DataType.DOUBLE, ir.DataType.FLOAT16, ir.DataType.BFLOAT16)
_SIMPLE = {"AddV2": "Add", "Add": "Add", "Sub": "Sub", "Mul": "Mul", "Maximum": "Max", "Minimum": "Min",
           "Pow": "Pow"}


@exporter(
    "AddV2", "Add", "Sub", "Mul", "Maximum", "Minimum", "Pow",
    samples=[
        Sample(fn(lambda a, b: a + b), (_A, _B), emits=("Add",), name="add"),
        Sample(fn(lambda a, b: a - b), (_A, _B), emits=("Sub",), name="sub"),
        Sample(fn(lambda a, b: a * b), (_A, _B), emits=("Mul",), name="mul"),
        Sample(fn(tf.maximum), (_A, _B), emits=("Max",), name="maximum"),
        Sample(fn(tf.minimum), (_A, _B), emits=("Min",), name="minimum"),
        Sample(fn(lambda a, b: tf.pow(tf.abs(a) + 0.5, b)), (_A, _B), emits=("Pow",), name="pow"),
        Sample(fn(lambda a, b: a + b), (ints(2, 3), ints(3)), emits=("Add",), name="int"),
    ],
)
def binary(g, a, b):
    """One ONNX op of the same name (Maximum -> Max ...)."""
    return g.op(_SIMPLE[g.tf_op.type], a, b)


@exporter(
    "RealDiv", "Div", "TruncateDiv",
    samples=[Sample(fn(lambda a, b: a / (tf.abs(b) + 0.5)), (_A, _B), emits=("Div",), name="realdiv"),
             Sample(fn(lambda a, b: tf.truncatediv(a, b)), (ints(2, 3, low=-9, high=9), ints(3, low=1, high=4)),
                    emits=("Div",), name="int_div")],
)
def div(g, a, b):
    """Division; integer Div truncates in TF as in ONNX."""
    return g.op("Div", a, b)


@exporter(
    "FloorDiv",
    samples=[Sample(fn(lambda a, b: a // (tf.abs(b) + 0.5)), (_A, _B), emits=("Floor",), name="float"),
             Sample(fn(lambda a, b: a // b), (ints(2, 3, low=-9, high=9), ints(3, low=1, high=4)), name="int")],
)
def floordiv(g, a, b):
    """Floats: Floor(Div). Integers: Div truncates, so subtract one where signs differ and it is inexact."""
    if a.dtype in _FLOATS:
        return g.op("Floor", g.op("Div", a, b))
    q = g.op("Div", a, b)
    inexact = g.op("Not", g.op("Equal", g.op("Mul", q, b), a))
    zero = g.const(0, a.dtype)
    signs = g.op("Xor", g.op("Less", a, zero), g.op("Less", b, zero))
    fix = g.op("Cast", g.op("And", inexact, signs), to=a.dtype)
    return g.op("Sub", q, fix)


@exporter(
    "FloorMod",
    samples=[Sample(fn(lambda a, b: tf.math.floormod(a, tf.abs(b) + 0.5)), (_A, _B), emits=("Mod",), name="float"),
             Sample(fn(tf.math.floormod), (ints(2, 3, low=-9, high=9), ints(3, low=1, high=4)), emits=("Mod",),
                    name="int")],
)
def floormod(g, a, b):
    """Python-style modulo (the result takes the divisor's sign): ONNX Mod with fmod=0 for integers;
    floats need fmod=1, then the divisor added where the signs differ."""
    if a.dtype not in _FLOATS:
        return g.op("Mod", a, b)
    r = g.op("Mod", a, b, fmod=1)
    zero = g.const(0, a.dtype)
    fix = g.op("And", g.op("Not", g.op("Equal", r, zero)),
               g.op("Xor", g.op("Less", r, zero), g.op("Less", b, zero)))
    return g.op("Where", fix, g.op("Add", r, b), r)


@exporter(
    "SquaredDifference",
    samples=[Sample(fn(tf.math.squared_difference), (_A, _B), emits=("Sub", "Mul"))],
)
def squared_difference(g, a, b):
    d = g.op("Sub", a, b)
    return g.op("Mul", d, d)


@exporter(
    "BiasAdd",
    samples=[Sample(fn(lambda x, b: tf.nn.bias_add(x, b)), (rand(2, 5, 4), rand(4)), emits=("Add",), name="nhwc"),
             Sample(fn(lambda x, b: tf.nn.bias_add(x, b, data_format="NCHW")), (rand(2, 4, 3, 3), rand(4)),
                    emits=("Add",), name="nchw")],
)
def bias_add(g, x, b):
    """Add along the channel axis (the last one for NHWC, axis 1 for NCHW)."""
    if g.attr("data_format", "NHWC").startswith("NC") and g.rank(x) > 2:
        b = g.op("Unsqueeze", b, g.const(list(range(1, g.rank(x) - 1)), ir.DataType.INT64))
    return g.op("Add", x, b)


@exporter(
    "AddN",
    samples=[Sample(fn(lambda a, b: tf.add_n([a, b, a])), (_A, _A), emits=("Sum",))],
)
def add_n(g, *xs):
    return g.op("Sum", *xs)
