"""FusedBatchNormV3 (inference) and the Keras BatchNormalization / LayerNormalization layers
-> BatchNormalization, LayerNormalization.

Keras 3 computes batch norm from its four variables with plain math ops; exported whole as a
layer it becomes one BatchNormalization whose initializers keep the layer's weight paths
(``batch_normalization/gamma`` ...). Channels-last data runs between two Transposes that the
layout pass cancels against its neighbours'. LayerNormalization over the last axis becomes one
LayerNormalization node (opset 17 and later; before that the layer's traced ops are exported).
"""

from __future__ import annotations

import keras
import numpy as np
import tensorflow as tf

from onnxport import Sample, exporter, module_exporter

from ._samples import fn, rand


def _bn(g, x, scale, offset, mean, var, epsilon, channels_last=True):
    rank = g.rank(x)
    if rank <= 2 or not channels_last:
        return g.op("BatchNormalization", x, scale, offset, mean, var, epsilon=float(epsilon))
    nd = rank - 2
    y = g.op("BatchNormalization", g.nchw(x, nd), scale, offset, mean, var, epsilon=float(epsilon))
    return g.nhwc(y, nd)


_C = 3
_STATS = (rand(_C), rand(_C), rand(_C), rand(_C, low=0.5, high=2.0))


@exporter(
    "FusedBatchNormV3", "FusedBatchNorm",
    samples=[Sample(fn(lambda x: tf.compat.v1.nn.fused_batch_norm(
        x, *(tf.constant(s) for s in _STATS), is_training=False, epsilon=1e-3)[0]),
        (rand(2, 4, 4, _C),), emits=("BatchNormalization",))],
)
def fused_batch_norm(g, x, scale, offset, mean, var, *rest):
    if g.attr("is_training", False):
        raise g.error("training-mode batch norm is not exported (it updates statistics); trace with training=False")
    fmt = g.attr("data_format", "NHWC")
    y = _bn(g, x, scale, offset, mean, var, g.attr("epsilon", 1e-3), channels_last=not fmt.startswith("NC"))
    return (y,) + (None,) * 5


def _keras_weight(g, layer, name: str, default: float, size: int, dtype):
    var = getattr(layer, name, None)
    if var is None:
        return g.const(np.full([size], default, dtype=np.float32), dtype)
    return g.converter.variable_value(g, g.converter.variable_of(var))


def _bn_layer(size=_C):
    layer = keras.layers.BatchNormalization()
    layer.build((None, 4, 4, size))
    for w, v in zip(layer.weights, _STATS):
        w.assign(v)
    return layer


#: the layer primitives' samples (module primitives carry none: tests/tensorflow/test_export_layers.py
#: exports each and compares it with Keras in onnxruntime)
SAMPLES: dict[str, list[Sample]] = {
    "BatchNormalization": [
        Sample(_bn_layer(), (rand(2, 4, 4, _C),), emits=("BatchNormalization",), name="nhwc"),
        Sample(keras.Sequential([keras.layers.Dense(4), keras.layers.BatchNormalization(center=False)]),
               (rand(2, 5),), emits=("BatchNormalization",), name="dense")],
    "LayerNormalization": [
        Sample(keras.layers.LayerNormalization(), (rand(2, 3, 8),), emits=("LayerNormalization",), name="ln"),
        Sample(keras.layers.LayerNormalization(center=False), (rand(2, 6),), emits=("LayerNormalization",),
               name="no_center"),
        # a variance near epsilon (1e-3): a wrong epsilon shows
        Sample(keras.layers.LayerNormalization(), (rand(2, 3, 8, low=-0.05, high=0.05),),
               emits=("LayerNormalization",), name="small")],
}


@module_exporter(keras.layers.BatchNormalization)
def batch_norm_layer(g, layer, x, *rest):
    """Inference batch norm over one axis (the last, or axis 1 of 2-D data)."""
    rank = g.rank(x)
    axis = layer.axis if isinstance(layer.axis, int) else (layer.axis[0] if len(layer.axis) == 1 else None)
    if axis is None or axis % rank not in (rank - 1, 1):
        raise g.error(f"BatchNormalization over axis {layer.axis} of rank-{rank} data is not supported")
    size = x.shape[axis % rank]
    dt = x.dtype
    ws = [_keras_weight(g, layer, n, d, size, dt) for n, d in
          (("gamma", 1.0), ("beta", 0.0), ("moving_mean", 0.0), ("moving_variance", 1.0))]
    return _bn(g, x, *ws, layer.epsilon, channels_last=axis % rank == rank - 1)


@module_exporter(keras.layers.LayerNormalization)
def layer_norm_layer(g, layer, x, *rest):
    """Normalization over the last axis (the Keras default)."""
    rank = g.rank(x)
    axes = layer.axis if isinstance(layer.axis, (list, tuple)) else [layer.axis]
    if sorted(a % rank for a in axes) != list(range(rank - len(axes), rank)) or getattr(layer, "rms_scaling", False):
        raise g.error(f"LayerNormalization over axes {layer.axis} is not exported whole")
    size = int(np.prod([x.shape[a] for a in range(rank - len(axes), rank)]))
    scale = _keras_weight(g, layer, "gamma", 1.0, size, x.dtype)
    bias = _keras_weight(g, layer, "beta", 0.0, size, x.dtype)
    return g.op("LayerNormalization", x, scale, bias, axis=-len(axes), epsilon=float(layer.epsilon))
