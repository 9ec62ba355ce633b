"""Softmax, LogSoftmax (TF: over the last axis) -> Softmax, LogSoftmax."""

from __future__ import annotations

import tensorflow as tf

from onnxport import Sample, exporter

from ._samples import fn, rand


@exporter(
    "Softmax", "LogSoftmax",
    samples=[Sample(fn(tf.nn.softmax), (rand(2, 3, 5, low=-4, high=4),), emits=("Softmax",), name="softmax"),
             Sample(fn(tf.nn.log_softmax), (rand(2, 7, low=-4, high=4),), emits=("LogSoftmax",), name="log")],
)
def softmax(g, x):
    return g.op(g.tf_op.type, x, axis=-1)
