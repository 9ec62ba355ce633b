"""Pad, PadV2, MirrorPad -> Pad (constant, reflect); SYMMETRIC mirror padding has no ONNX mode."""

from __future__ import annotations

import numpy as np
import tensorflow as tf

from onnxport import Sample, exporter

from ._samples import fn, rand


@exporter(
    "Pad", "PadV2", "MirrorPad",
    samples=[Sample(fn(lambda x: tf.pad(x, [[0, 0], [1, 2], [2, 1]])), (rand(2, 3, 4),), emits=("Pad",), name="zeros"),
             Sample(fn(lambda x: tf.pad(x, [[0, 0], [1, 1]], constant_values=3.0)), (rand(2, 3),), emits=("Pad",),
                    name="value"),
             Sample(fn(lambda x: tf.pad(x, [[0, 0], [2, 1]], mode="REFLECT")), (rand(2, 4),), emits=("Pad",),
                    name="reflect")],
)
def pad(g, x, paddings, value=None):
    p = np.asarray(g.static_ints(1)).reshape(-1, 2)
    pads = g.ints([int(v) for v in p[:, 0]] + [int(v) for v in p[:, 1]])
    if g.tf_op.type == "MirrorPad":
        mode = g.attr("mode")
        if mode != "REFLECT":
            raise g.error(f"MirrorPad mode {mode} has no ONNX Pad mode (only REFLECT does)")
        return g.op("Pad", x, pads, mode="reflect")
    return g.op("Pad", x, pads, value)
