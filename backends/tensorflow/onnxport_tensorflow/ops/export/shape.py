"""Shape, Size, Reshape, Squeeze, ExpandDims -> Shape, Size, Reshape, Squeeze, Unsqueeze."""

from __future__ import annotations

import numpy as np
import onnx_ir as ir
import tensorflow as tf

from onnxport import Sample, exporter

from ._samples import fn, rand

_I64 = ir.DataType.INT64


@exporter(
    "Shape", "Size",
    samples=[Sample(fn(lambda x: tf.reshape(x, [tf.shape(x)[0], -1])), (rand(2, 3, 4),), name="shape"),
             Sample(fn(lambda x: tf.cast(tf.size(x), tf.float32) * x), (rand(2, 3),), name="size")],
)
def shape(g, x):
    """The int64 shape or size, cast to TF's int32 when that is the traced type."""
    out = g.op("Shape" if g.tf_op.type == "Shape" else "Size", x)
    return g.cast(out, g.out_dtype())


@exporter(
    "Reshape",
    samples=[Sample(fn(lambda x: tf.reshape(x, [-1, 12])), (rand(2, 3, 4),), emits=("Reshape",), name="static"),
             Sample(fn(lambda x: tf.reshape(x, tf.concat([tf.shape(x)[:1], [3, 4]], 0))), (rand(2, 12),),
                    emits=("Reshape",), name="dynamic")],
)
def reshape(g, x, target):
    """A trace-time shape is a constant (a 0 in it is a real zero: ``allowzero``); a run-time one
    is read with ``allowzero`` too (opset 14+)."""
    known = g.static(1)
    if known is None:
        known = _batch_kept(g)
    if known is not None:
        dims = [int(d) for d in known.reshape(-1)]
        zero_is_copy = g.static(1) is None
        return g.op("Reshape", x, g.ints(dims), allowzero=1 if 0 in dims and not zero_is_copy else None)
    # a shape only the run knows: TF reads a 0 in it as a zero-sized dim, which is ONNX's allowzero
    return g.op("Reshape", x, g.cast(target, _I64), allowzero=1 if g.opset >= 14 else None)


def _batch_kept(g):
    """A target ``[tf.shape(x)[0], d1, ...]`` with constant ``d1 ...`` (Keras Flatten) as
    ``[0, d1, ...]``: ONNX Reshape copies a 0 from the input, so no Shape/Slice nodes."""
    target = g.tf_op.inputs[1].op
    x = g.tf_op.inputs[0]
    if target.type != "Pack" or not target.inputs:
        return None
    first = target.inputs[0].op
    if first.type != "StridedSlice" or first.inputs[0].op.type != "Shape" or first.inputs[0].op.inputs[0] is not x:
        return None
    conv = g.converter
    if [int(v) for v in np.ravel(conv.static(first.inputs[1]) if conv.static(first.inputs[1]) is not None else [-9])] != [0]:
        return None
    rest = [conv.static(t) for t in target.inputs[1:]]
    if any(r is None for r in rest) or any(int(r) == 0 for r in rest):
        return None
    return np.asarray([0] + [int(r) for r in rest])


@exporter(
    "Squeeze",
    samples=[Sample(fn(lambda x: tf.squeeze(x, [1])), (rand(2, 1, 3),), emits=("Squeeze",), name="axis"),
             Sample(fn(tf.squeeze), (rand(1, 2, 1, 3),), emits=("Squeeze",), name="all")],
)
def squeeze(g, x):
    axes = g.attr("squeeze_dims") or []
    if not axes:
        shape = g.in_shape(0)
        axes = [i for i, d in enumerate(shape) if d == 1]
        out = g.out_shape()
        if out is None or len(out) != len(shape) - len(axes):
            raise g.error("squeezing every unit dim of a tensor with unknown dims is ambiguous; name the axes")
    rank = g.rank(x)
    return g.op("Squeeze", x, g.ints([a % rank for a in axes]))


@exporter(
    "ExpandDims",
    samples=[Sample(fn(lambda x: tf.expand_dims(x, -1)), (rand(2, 3),), emits=("Unsqueeze",))],
)
def expand_dims(g, x, axis):
    a = g.static_ints(1)[0]
    rank = g.rank(x) + 1
    return g.op("Unsqueeze", x, g.ints([a % rank]))


@exporter(
    "Transpose",
    samples=[Sample(fn(lambda x: tf.transpose(x, [2, 0, 1])), (rand(2, 3, 4),), emits=("Transpose",))],
)
def transpose(g, x, perm):
    return g.op("Transpose", x, perm=g.static_ints(1))


@exporter(
    "Cast",
    samples=[Sample(fn(lambda x: tf.cast(x * 3, tf.int32)), (rand(2, 3),), emits=("Cast",), name="to_int"),
             Sample(fn(lambda x: tf.cast(x > 0, tf.float32)), (rand(2, 3),), emits=("Cast",), name="from_bool")],
)
def cast(g, x):
    """Float to int truncates toward zero in TF as in ONNX."""
    return g.op("Cast", x, to=g.out_dtype())


@exporter(
    "Fill",
    samples=[Sample(fn(lambda x: x + tf.fill(tf.shape(x), 2.0)), (rand(2, 3),), emits=("Expand",))],
)
def fill(g, dims, value):
    return g.op("Expand", value, g.cast(dims, _I64))


@exporter(
    "ZerosLike", "OnesLike",
    samples=[Sample(fn(lambda x: tf.ones_like(x) + tf.zeros_like(x)), (rand(2, 3),), emits=("Expand",))],
)
def like(g, x):
    one = 1 if g.tf_op.type == "OnesLike" else 0
    return g.op("Expand", g.const(np.asarray(one), x.dtype), g.op("Shape", x))


@exporter(
    "Range",
    samples=[Sample(fn(lambda x: x * tf.range(0.0, 3.0, 1.0)), (rand(2, 3),), emits=(), name="range")],
)
def range_(g, start, limit, delta):
    """ONNX Range has no 16-bit floats: those run in float32 and are cast back."""
    dt = g.out_dtype()
    if dt in (ir.DataType.BFLOAT16, ir.DataType.FLOAT16):
        f32 = ir.DataType.FLOAT
        out = g.op("Range", g.cast(start, f32), g.cast(limit, f32), g.cast(delta, f32))
        return g.op("Cast", out, to=dt)
    return g.op("Range", start, limit, delta)


@exporter(
    "Tile",
    samples=[Sample(fn(lambda x: tf.tile(x, [2, 3])), (rand(2, 3),), emits=("Tile",))],
)
def tile(g, x, multiples):
    return g.op("Tile", x, g.cast(multiples, _I64))
