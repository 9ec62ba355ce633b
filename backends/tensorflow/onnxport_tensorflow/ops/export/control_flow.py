"""StatelessIf, If -> If (each branch function becomes an ONNX subgraph reading outer values).

``tf.cond`` on a tensor predicate traces to (Stateless)If; a Python predicate is resolved by
TF at trace time and leaves no op. StatelessWhile / While (``tf.while_loop``) become Loop, TensorLists
carried as sequences (:mod:`.tensor_list`); Keras LSTM/GRU layers are exported whole (:mod:`.rnn`).
"""

from __future__ import annotations

import onnx_ir as ir
import tensorflow as tf

from onnxport import Sample, exporter

from ._samples import fn, rand


@exporter(
    "StatelessIf", "If",
    samples=[Sample(fn(lambda x: tf.cond(tf.reduce_sum(x) > 0, lambda: x * 2.0, lambda: tf.nn.relu(x) - 1.0)),
                    (rand(2, 3),), emits=("If",), name="cond"),
             Sample(fn(lambda x: tf.cond(tf.reduce_sum(x) < 0, lambda: (x, x + 1.0), lambda: (x * 3.0, x - 1.0))),
                    (rand(2, 3),), emits=("If",), name="two_outputs")],
)
def if_(g, cond, *operands):
    """The predicate must be a scalar; non-boolean ones are compared with zero, as TF does."""
    if cond.shape is not None and len(cond.shape) != 0:
        raise g.error(f"a rank-{len(cond.shape)} If predicate is not supported (TF requires a scalar)")
    if cond.dtype != ir.DataType.BOOL:
        cond = g.op("Not", g.op("Equal", cond, g.const(0, cond.dtype)))
    then_graph = g.branch("then_branch", operands)
    else_graph = g.branch("else_branch", operands)
    n = len(g.tf_op.outputs)
    return g.op("If", cond, then_branch=then_graph, else_branch=else_graph, outputs=n)


def _fresh(g, base: str) -> str:
    """A model-unique value name for a graph input (claimed by ``input``)."""
    name = g.unique_name(base)
    g._names.discard(name)
    return name


def _count_up(x):
    i = tf.constant(0)
    _, y = tf.while_loop(lambda i, y: i < 3, lambda i, y: (i + 1, y * 0.5 + tf.reduce_mean(y)), (i, x))
    return y


def _grow(x):
    return tf.while_loop(lambda y: tf.reduce_sum(y) < 50.0, lambda y: y * 2.0 + 0.1, (x,))[0]


@exporter(
    "StatelessWhile", "While",
    samples=[Sample(fn(_count_up), (rand(2, 3),), emits=("Loop",), name="counter"),
             Sample(fn(_grow), (rand(2, 3, low=0.1, high=1.0),), emits=("Loop",), name="data_dependent")],
)
def while_(g, *operands):
    """Loop with no trip count: the condition function runs once on the initial values (in the
    graph) and again at the end of each iteration (in the body). Variables the body reads stay
    outer initializers, not loop-carried values; TensorLists are carried as ONNX sequences."""
    op = g.tf_op
    carried = [i for i, t in enumerate(op.inputs) if t.dtype != tf.resource]
    cond_fn, body_fn = g.function_graph("cond"), g.function_graph("body")
    first = g.inline(cond_fn, operands, list(op.inputs))[0]
    body = type(g)(g.opset, name=g.unique_name("while_body"), parent=g)
    body.input(_fresh(body, "iteration"), ir.DataType.INT64, [])
    body.input(_fresh(body, "cond_in"), ir.DataType.BOOL, [])
    vals: list = list(operands)
    for i in carried:
        t = op.outputs[i]
        src = t if t.shape.rank is not None else op.inputs[i]  # TF keeps the rank through the loop
        shape = None if src.shape.rank is None else (
            list(t.shape.as_list()) if t.shape.rank is not None else [None] * src.shape.rank)
        if t.dtype == tf.variant:  # a TensorList: the sequence type of the initial value
            if not isinstance(operands[i].type, ir.SequenceType):
                raise g.error(f"loop value {i} is a TF variant that is no TensorList")
            vals[i] = body.input(_fresh(body, f"loop_{i}"), ir.DataType.FLOAT, None)
            vals[i].type = operands[i].type
            continue
        vals[i] = body.input(_fresh(body, f"loop_{i}"), g.converter_dtype(t.dtype), shape)
    body.tf_op = op
    new = body.inline(body_fn, vals, list(op.inputs))
    for i in carried:  # function bodies may lose static shapes: the loop keeps its values' shapes
        if new[i] is not None and new[i].shape is None and vals[i].shape is not None:
            new[i].shape = vals[i].shape
    body.tf_op = op
    cond_out = body.inline(cond_fn, new, list(op.inputs))[0]
    body.output(body.cast(cond_out, ir.DataType.BOOL) if cond_out.dtype is not None else cond_out)
    for i in carried:
        out = body.output(new[i])
        if isinstance(new[i].type, ir.SequenceType):  # the output's Identity copy keeps the sequence type
            out.type = new[i].type
    outs = g.op("Loop", None, g.cast(first, ir.DataType.BOOL), *[operands[i] for i in carried],
                body=body.graph(), outputs=len(carried))
    outs = outs if isinstance(outs, tuple) else (outs,)
    result: list = [None] * len(op.outputs)
    for i, v in zip(carried, outs):
        if op.inputs[i].dtype == tf.variant:
            v.type = operands[i].type
        result[i] = v
    return tuple(result)
