"""MaxPool, AvgPool (2-D and 3-D) -> MaxPool, AveragePool between channels-last Transposes.

TF's SAME average pooling divides by the number of real elements: ``count_include_pad=0``."""

from __future__ import annotations

import keras

from onnxport import Sample, exporter

from ._samples import rand
from ._window import pads, spatial


@exporter(
    "MaxPool", "AvgPool", "MaxPool3D", "AvgPool3D",
    samples=[
        Sample(keras.layers.MaxPooling2D(2), (rand(2, 8, 8, 3),), emits=("MaxPool",), name="max"),
        Sample(keras.layers.MaxPooling2D(3, strides=2, padding="same"), (rand(1, 9, 9, 2),), emits=("MaxPool",),
               name="max_same"),
        Sample(keras.layers.AveragePooling2D(2), (rand(2, 8, 8, 3),), emits=("AveragePool",), name="avg"),
        Sample(keras.layers.AveragePooling2D(3, strides=2, padding="same"), (rand(1, 9, 9, 2),),
               emits=("AveragePool",), name="avg_same"),
        Sample(keras.layers.MaxPooling1D(2), (rand(2, 8, 3),), emits=("MaxPool",), name="max1d"),
        Sample(keras.layers.AveragePooling3D(2), (rand(1, 4, 4, 4, 2),), emits=("AveragePool",), name="avg3d"),
    ],
)
def pool(g, x):
    nd = g.rank(x) - 2
    fmt = g.attr("data_format", "NHWC")
    kernel = spatial(g.attr("ksize"), fmt)
    strides = spatial(g.attr("strides"), fmt)
    attrs = pads(g, spatial(g.in_shape(0), fmt), kernel, strides, [1] * nd, g.attr("padding"), None, fmt)
    op = "MaxPool" if g.tf_op.type.startswith("Max") else "AveragePool"
    if op == "AveragePool":
        attrs["count_include_pad"] = 0
    channels_last = not fmt.startswith("NC")
    xin = g.nchw(x, nd) if channels_last else x
    y = g.op(op, xin, kernel_shape=kernel, strides=strides, **attrs)
    return g.nhwc(y, nd) if channels_last else y
