"""SelectV2, Select -> Where."""

from __future__ import annotations

import tensorflow as tf

from onnxport import Sample, exporter

from ._samples import fn, rand


@exporter(
    "SelectV2", "Select",
    samples=[Sample(fn(lambda a, b: tf.where(a > 0, a, b)), (rand(2, 4), rand(2, 4)), emits=("Where",))],
)
def where(g, cond, a, b):
    return g.op("Where", cond, a, b)
