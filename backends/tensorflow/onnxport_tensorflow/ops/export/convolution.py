"""Conv2D, Conv3D, DepthwiseConv2dNative -> Conv (channels-last data between two Transposes).

TF kernels are HWIO (depthwise: H, W, C, multiplier); a variable's kernel is stored as the ONNX
OIHW initializer under its own name, so the graph has no Transpose on weights. Channels-last data
runs as ``Transpose -> Conv -> Transpose``; the layout pass cancels the pairs between layers.
Conv1D traces as ExpandDims -> Conv2D -> Squeeze. A Keras dilated convolution traces as
SpaceToBatchND -> Conv -> BatchToSpaceND, which the exporter turns into the attributes of one
dilated Conv (``g.attr`` answers ``dilations``/``padding`` for the whole chain); a grouped Keras
convolution is a nested function call, inlined by the exporter.
"""

from __future__ import annotations

import keras
import numpy as np
import onnx_ir as ir
import tensorflow as tf

from onnxport import Sample, exporter

from ._samples import fn, rand
from ._window import pads, spatial

_KD, _KG = rand(3, 3, 2, 4), rand(3, 3, 2, 6)
_FLOATS = (ir.DataType.FLOAT, ir.DataType.DOUBLE, ir.DataType.FLOAT16, ir.DataType.BFLOAT16)


def _conv(g, x, w, kernel_perm, group=1):
    """The shared body: ``kernel_perm`` turns the TF kernel into ONNX's; nd from the kernel's rank."""
    nd = g.rank(x) - 2
    fmt = g.attr("data_format", "NHWC")
    strides = spatial(g.attr("strides"), fmt)
    dilations = spatial(g.attr("dilations") or [1] * (nd + 2), fmt)
    shape = g.in_shape(0)
    in_spatial = spatial(shape, fmt)
    kernel = list(g.in_shape(1)[:nd])
    attrs = pads(g, in_spatial, kernel, strides, dilations, g.attr("padding"), g.attr("explicit_paddings"), fmt)
    weight = g.weight(w, kernel_perm.__name__, kernel_perm, lambda v: _onnx_kernel(g, v, kernel_perm, nd))
    channels_last = not fmt.startswith("NC")
    xin = g.nchw(x, nd) if channels_last else x
    dtype = x.dtype
    if dtype not in _FLOATS:  # ONNX Conv is float-only: integer data runs in float32
        xin, weight = g.cast(xin, ir.DataType.FLOAT), g.cast(weight, ir.DataType.FLOAT)
    y = g.op("Conv", xin, weight, strides=strides, dilations=dilations, group=group, **attrs)
    if dtype not in _FLOATS:
        y = g.op("Cast", y, to=dtype)
    return g.nhwc(y, nd) if channels_last else y


def hwio_to_oihw(w: np.ndarray) -> np.ndarray:
    nd = w.ndim - 2
    return np.transpose(w, [nd + 1, nd] + list(range(nd)))


def depthwise_to_oihw(w: np.ndarray) -> np.ndarray:
    h, ww, c, m = w.shape
    return np.transpose(w.reshape(h, ww, 1, c * m), [3, 2, 0, 1])


def _onnx_kernel(g, w, kernel_perm, nd):
    """The same conversion as graph nodes (a kernel computed at run time)."""
    if kernel_perm is hwio_to_oihw:
        return g.op("Transpose", w, perm=[nd + 1, nd] + list(range(nd)))
    shape = g.op("Concat", g.op("Slice", g.op("Shape", w), g.ints([0]), g.ints([2])), g.ints([1, -1]), axis=0)
    return g.op("Transpose", g.op("Reshape", w, shape), perm=[3, 2, 0, 1])


@exporter(
    "Conv2D", "Conv3D",
    samples=[
        Sample(keras.layers.Conv2D(4, 3, padding="same"), (rand(2, 8, 8, 3),), emits=("Conv",), name="same"),
        Sample(keras.layers.Conv2D(6, (3, 2), strides=2, dilation_rate=1, use_bias=False), (rand(1, 9, 7, 2),),
               emits=("Conv",), name="strided_valid"),
        Sample(fn(lambda x: tf.nn.conv2d(x, _KD, 1, "SAME", dilations=2)),
               (rand(1, 9, 9, 2),), emits=("Conv",), name="dilated"),
        Sample(fn(lambda x: tf.nn.conv2d(x, _KG, 1, "VALID")), (rand(1, 6, 6, 4),),
               emits=("Conv",), name="grouped"),
        Sample(keras.layers.Conv1D(5, 3, padding="same"), (rand(2, 10, 3),), emits=("Conv",), name="conv1d"),
        Sample(keras.layers.Conv3D(3, 2), (rand(1, 4, 5, 6, 2),), emits=("Conv",), name="conv3d"),
        # Keras traces these through a nested function call / SpaceToBatchND chains (see the exporter)
        Sample(keras.layers.Conv2D(6, 3, groups=2), (rand(2, 7, 7, 4),), emits=("Conv",), name="keras_grouped"),
        Sample(keras.layers.Conv2D(4, 3, dilation_rate=(2, 3), padding="same"), (rand(2, 9, 10, 3),),
               emits=("Conv",), name="keras_dilated"),
        Sample(keras.layers.Conv1D(4, 3, dilation_rate=2, padding="causal"), (rand(2, 12, 3),),
               emits=("Conv",), name="keras_dilated_causal1d"),
    ],
)
def conv(g, x, w):
    """Conv; a kernel with fewer input channels than the data has is a grouped convolution."""
    cin = g.in_shape(0)[-1] if not g.attr("data_format", "NHWC").startswith("NC") else g.in_shape(0)[1]
    kin = g.in_shape(1)[-2]
    group = cin // kin if cin is not None and kin else 1
    return _conv(g, x, w, hwio_to_oihw, group)


@exporter(
    "DepthwiseConv2dNative",
    samples=[
        Sample(keras.layers.DepthwiseConv2D(3, padding="same"), (rand(2, 8, 8, 3),), emits=("Conv",), name="same"),
        Sample(keras.layers.DepthwiseConv2D(3, strides=2, depth_multiplier=2, use_bias=False), (rand(1, 9, 9, 2),),
               emits=("Conv",), name="multiplier"),
        Sample(keras.layers.DepthwiseConv2D(3, dilation_rate=2), (rand(2, 9, 9, 3),), emits=("Conv",),
               name="keras_dilated"),
    ],
)
def depthwise(g, x, w):
    """Conv with one group per input channel; the kernel [H, W, C, M] becomes [C*M, 1, H, W]."""
    return _conv(g, x, w, depthwise_to_oihw, group=int(g.in_shape(1)[2]))
