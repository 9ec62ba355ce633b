"""TensorList* (tf.TensorArray, the lists TF while loops build) -> ONNX sequence ops.

A TF TensorList is an ONNX sequence of tensors. ``TensorListReserve`` with an element shape TF
knows fully gives ``num_elements`` zero tensors (unwritten items read as zeros, as in TF); with
a partly unknown element shape it gives an empty sequence that writes fill in order (a write at
index ``len`` appends; a write past the end fails in the runtime: the shape of the missing
items is unknown). ``TensorListSetItem`` replaces an existing item or appends. While loops carry
the sequences as loop-carried values (:mod:`.control_flow`).
"""

from __future__ import annotations

import numpy as np
import onnx_ir as ir
import tensorflow as tf

from onnxport import Sample, exporter

from ._samples import fn, rand


def _seq(v: ir.Value, dtype: ir.DataType) -> ir.Value:
    v.type = ir.SequenceType(ir.TensorType(dtype))
    v.shape = None
    return v


def _elem_dtype(g) -> ir.DataType:
    return g.converter_dtype(g.attr("element_dtype"))


def _i64(g, v: ir.Value) -> ir.Value:
    return g.cast(v, ir.DataType.INT64)


def _rows(x):
    """Writes row i (times 2, plus the running sum) at index i inside a while loop; stacks."""
    n = tf.shape(x)[0]
    ta = tf.TensorArray(tf.float32, size=n, element_shape=x.shape[1:])

    def body(i, acc, ta):
        acc = acc + x[i]
        return i + 1, acc, ta.write(i, acc * 2.0)

    _, _, ta = tf.while_loop(lambda i, acc, ta: i < n, body, (0, tf.zeros_like(x[0]), ta))
    return ta.stack()


def _reverse_rows(x):
    """Writes backwards into a list with a known element shape (pre-filled with zeros)."""
    ta = tf.TensorArray(tf.float32, size=4, element_shape=[3])

    def body(i, ta):
        return i + 1, ta.write(3 - i, tf.nn.relu(x[i]) + tf.cast(i, tf.float32))

    _, ta = tf.while_loop(lambda i, ta: i < 4, body, (0, ta))
    return ta.stack()


def _dynamic_rows(x):
    """An element shape with an unknown (batch) dim: an empty list written in order."""
    t = tf.shape(x)[1]
    ta = tf.TensorArray(tf.float32, size=t)

    def body(i, ta):
        return i + 1, ta.write(i, tf.reduce_sum(x[:, : i + 1], axis=1))

    _, ta = tf.while_loop(lambda i, ta: i < t, body, (0, ta))
    return tf.transpose(ta.stack())


def _unstack_read(x):
    """TensorListFromTensor (unstack) read back item by item, the length, a stack of a slice."""
    ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True).unstack(x)
    n = ta.size()

    def body(i, acc):
        return i + 1, acc + ta.read(i) * tf.cast(i + 1, tf.float32)

    _, acc = tf.while_loop(lambda i, acc: i < n, body, (0, tf.zeros_like(x[0])))
    return acc, tf.cast(n, tf.float32) + 0.0


def _push_pop(x):
    lst = tf.raw_ops.EmptyTensorList(element_shape=tf.constant([-1], tf.int32), max_num_elements=-1,
                                     element_dtype=tf.float32)
    lst = tf.raw_ops.TensorListPushBack(input_handle=lst, tensor=x[0])
    lst = tf.raw_ops.TensorListPushBack(input_handle=lst, tensor=x[1] * 2.0)
    lst = tf.raw_ops.TensorListPushBack(input_handle=lst, tensor=x[2] - 1.0)
    lst, last = tf.raw_ops.TensorListPopBack(input_handle=lst, element_shape=tf.constant([-1], tf.int32),
                                             element_dtype=tf.float32)
    n = tf.raw_ops.TensorListLength(input_handle=lst)
    stacked = tf.raw_ops.TensorListStack(input_handle=lst, element_shape=tf.constant([-1], tf.int32),
                                         element_dtype=tf.float32)
    return stacked, last, n


_LOOPS = [Sample(fn(_rows), (rand(5, 3),), emits=("Loop", "SequenceInsert", "ConcatFromSequence"), name="rows"),
          Sample(fn(_reverse_rows), (rand(4, 3),), emits=("Loop", "SplitToSequence"), name="reverse_known_shape"),
          Sample(fn(_dynamic_rows), (rand(2, 6),), emits=("Loop", "SequenceEmpty"), name="unknown_shape")]


@exporter("TensorListReserve", samples=_LOOPS)
def reserve(g, element_shape, num_elements):
    """``num_elements`` zero items when the element shape is known at trace time, else empty."""
    dtype = _elem_dtype(g)
    shape = g.static(0)
    if shape is not None and np.ndim(shape) == 1 and (np.asarray(shape) >= 0).all():
        n = g.op("Reshape", _i64(g, num_elements), g.ints([1]))
        zeros = g.op("ConstantOfShape", g.op("Concat", n, g.ints([int(d) for d in shape]), axis=0),
                     value=ir.tensor(np.zeros([1], dtype=dtype.numpy())))
        return _seq(g.op("SplitToSequence", zeros, axis=0, keepdims=0), dtype)
    return _seq(g.op("SequenceEmpty", dtype=dtype), dtype)


@exporter("EmptyTensorList", samples=[Sample(fn(_push_pop), (rand(3, 4),), emits=("SequenceEmpty",), name="push_pop")])
def empty(g, element_shape, max_num_elements):
    dtype = _elem_dtype(g)
    return _seq(g.op("SequenceEmpty", dtype=dtype), dtype)


@exporter("TensorListSetItem", samples=_LOOPS[:1])
def set_item(g, handle, index, item):
    """Replace item ``index`` (If: inside the list) or insert it there (at the end: an append)."""
    if g.attr("resize_if_index_out_of_bounds", False):
        raise g.error("TensorListSetItem with resize_if_index_out_of_bounds is not supported")
    dtype = item.dtype
    i = _i64(g, index)
    inside = g.op("Less", i, g.op("SequenceLength", handle))
    then = type(g)(g.opset, name=g.unique_name("set_item_replace"), parent=g)
    then.output(_seq(then.op("SequenceInsert", _seq(then.op("SequenceErase", handle, i), dtype), item, i), dtype))
    other = type(g)(g.opset, name=g.unique_name("set_item_append"), parent=g)
    other.output(_seq(other.op("SequenceInsert", handle, item, i), dtype))
    return _seq(g.op("If", inside, then_branch=then.graph(), else_branch=other.graph()), dtype)


@exporter("TensorListGetItem", samples=[Sample(fn(_unstack_read), (rand(4, 3),), emits=("SequenceAt",), name="read")])
def get_item(g, handle, index, element_shape):
    return g.op("SequenceAt", handle, _i64(g, index))


@exporter("TensorListStack", samples=_LOOPS[:1])
def stack(g, handle, element_shape):
    """ConcatFromSequence with a new axis (an empty list has no item to take a shape from: the
    runtime refuses it)."""
    return g.op("ConcatFromSequence", handle, axis=0, new_axis=1)


@exporter("TensorListFromTensor", samples=[Sample(fn(_unstack_read), (rand(4, 3),), emits=("SplitToSequence",),
                                                  name="unstack")])
def from_tensor(g, tensor, element_shape):
    return _seq(g.op("SplitToSequence", tensor, axis=0, keepdims=0), tensor.dtype)


@exporter("TensorListLength", samples=[Sample(fn(_unstack_read), (rand(4, 3),), emits=("SequenceLength",),
                                              name="length")])
def length(g, handle):
    return g.cast(g.op("SequenceLength", handle), ir.DataType.INT32)


@exporter("TensorListPushBack", samples=[Sample(fn(_push_pop), (rand(3, 4),), emits=("SequenceInsert",),
                                                name="push_pop")])
def push_back(g, handle, item):
    return _seq(g.op("SequenceInsert", handle, item), item.dtype)


@exporter("TensorListPopBack", samples=[Sample(fn(_push_pop), (rand(3, 4),), emits=("SequenceErase",),
                                               name="push_pop")])
def pop_back(g, handle, element_shape):
    dtype = _elem_dtype(g)
    last = g.op("SequenceAt", handle, g.const(np.asarray(-1, dtype=np.int64)))
    return _seq(g.op("SequenceErase", handle), dtype), last


def _element_shape(x):
    """TensorListElementShape of a list whose element shape is declared (as TF lists of one shape are)."""
    lst = tf.raw_ops.EmptyTensorList(element_shape=tf.constant([4], tf.int32), max_num_elements=-1,
                                     element_dtype=tf.float32)
    lst = tf.raw_ops.TensorListPushBack(input_handle=lst, tensor=x[0])
    shape = tf.raw_ops.TensorListElementShape(input_handle=lst, shape_type=tf.int32)
    return tf.cast(shape, tf.float32) + 0.0 * tf.reduce_sum(x)


@exporter("TensorListElementShape", samples=[Sample(fn(_element_shape), (rand(3, 4),), emits=("Shape",),
                                                    name="declared")])
def element_shape(g, handle):
    """The shape of item 0 (TF's known element shape; lists here hold items of one shape)."""
    out = g.op("Shape", g.op("SequenceAt", handle, g.const(np.asarray(0, dtype=np.int64))))
    return g.cast(out, g.out_dtype())
