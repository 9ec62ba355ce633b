"""Mean, Sum, Max, Min, Prod, All, Any, ArgMax, ArgMin -> ReduceMean ... ArgMax, ArgMin."""

from __future__ import annotations

import onnx_ir as ir
import tensorflow as tf

from onnxport import Sample, exporter

from ._samples import fn, rand

_OPS = {"Mean": "ReduceMean", "Sum": "ReduceSum", "Max": "ReduceMax", "Min": "ReduceMin", "Prod": "ReduceProd"}


@exporter(
    "Mean", "Sum", "Max", "Min", "Prod",
    samples=[Sample(fn(lambda x: tf.reduce_mean(x, [1, 2])), (rand(2, 3, 4, 5),), emits=("ReduceMean",), name="mean"),
             Sample(fn(lambda x: tf.reduce_sum(x, -1, keepdims=True)), (rand(2, 3),), emits=("ReduceSum",), name="sum"),
             Sample(fn(lambda x: tf.reduce_max(x, 1)), (rand(2, 3),), emits=("ReduceMax",), name="max"),
             Sample(fn(lambda x: tf.reduce_min(x, 0)), (rand(2, 3),), emits=("ReduceMin",), name="min"),
             Sample(fn(lambda x: tf.reduce_prod(x, 1)), (rand(2, 3),), emits=("ReduceProd",), name="prod")],
)
def reduce(g, x, axes_t):
    rank = g.rank(x)
    axes = [a % max(rank, 1) for a in g.static_ints(1)]
    keep = int(bool(g.attr("keep_dims", False)))
    if not axes:
        return g.op("Identity", x)
    return g.op(_OPS[g.tf_op.type], x, g.ints(axes), keepdims=keep)


@exporter(
    "All", "Any",
    samples=[Sample(fn(lambda x: tf.cast(tf.reduce_any(x > 0.5, 1), tf.float32)), (rand(2, 3),), emits=("ReduceMax",))],
)
def logical_reduce(g, x, axes_t):
    axes = [a % g.rank(x) for a in g.static_ints(1)]
    keep = int(bool(g.attr("keep_dims", False)))
    op = "ReduceMin" if g.tf_op.type == "All" else "ReduceMax"
    y = g.op(op, g.op("Cast", x, to=ir.DataType.UINT8), g.ints(axes), keepdims=keep)
    return g.op("Cast", y, to=ir.DataType.BOOL)


@exporter(
    "ArgMax", "ArgMin",
    samples=[Sample(fn(lambda x: tf.argmax(x, 1)), (rand(2, 5),), emits=("ArgMax",), name="argmax"),
             Sample(fn(lambda x: tf.argmin(x, -1, output_type=tf.int32)), (rand(2, 5),), emits=("ArgMin",),
                    name="argmin")],
)
def argmax(g, x, axis_t):
    axis = g.static_ints(1)[0] % g.rank(x)
    y = g.op(g.tf_op.type, x, axis=axis, keepdims=0)
    return g.cast(y, g.out_dtype())
