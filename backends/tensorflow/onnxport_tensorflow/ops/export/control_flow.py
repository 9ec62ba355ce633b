"""StatelessIf, If -> If (each branch function becomes an ONNX subgraph reading outer values).

``tf.cond`` on a tensor predicate traces to (Stateless)If; a Python predicate is resolved by
TF at trace time and leaves no op. StatelessWhile / While (``tf.while_loop``) have no primitive
yet; Keras recurrent layers, which trace to While, are exported whole (:mod:`.rnn`).
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
