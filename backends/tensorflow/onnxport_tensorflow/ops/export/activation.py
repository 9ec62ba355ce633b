"""Activations: Relu, Relu6, Sigmoid, Tanh, Elu, Selu, Softplus, Softsign, LeakyRelu
(-> Relu, Clip, Sigmoid, Tanh, Elu, Selu, Softplus, Softsign, LeakyRelu).

Keras GELU (exact and tanh forms) and Swish trace to Erf / Tanh / Pow / Mul / Sigmoid, which
have their own primitives."""

from __future__ import annotations

import numpy as np
import tensorflow as tf

from onnxport import Sample, exporter

from ._samples import fn, rand

_X = rand(2, 3, 4, low=-3, high=3)
_SAME = {"Relu": "Relu", "Sigmoid": "Sigmoid", "Tanh": "Tanh", "Elu": "Elu", "Selu": "Selu",
         "Softplus": "Softplus", "Softsign": "Softsign"}


@exporter(
    *_SAME,
    samples=[
        Sample(fn(tf.nn.relu), (_X,), emits=("Relu",), name="relu"),
        Sample(fn(tf.sigmoid), (_X,), emits=("Sigmoid",), name="sigmoid"),
        Sample(fn(tf.tanh), (_X,), emits=("Tanh",), name="tanh"),
        Sample(fn(tf.nn.elu), (_X,), emits=("Elu",), name="elu"),
        Sample(fn(tf.nn.selu), (_X,), emits=("Selu",), name="selu"),
        Sample(fn(tf.nn.softplus), (_X,), emits=("Softplus",), name="softplus"),
        Sample(fn(tf.nn.softsign), (_X,), emits=("Softsign",), name="softsign"),
    ],
)
def activation(g, x):
    return g.op(_SAME[g.tf_op.type], x)


@exporter("Relu6", samples=[Sample(fn(tf.nn.relu6), (_X * 3,), emits=("Clip",))])
def relu6(g, x):
    dt = x.dtype
    return g.op("Clip", x, g.const(np.asarray(0, np.float32), dt), g.const(np.asarray(6, np.float32), dt))


@exporter("LeakyRelu", samples=[Sample(fn(lambda x: tf.nn.leaky_relu(x, 0.1)), (_X,), emits=("LeakyRelu",))])
def leaky_relu(g, x):
    return g.op("LeakyRelu", x, alpha=float(g.attr("alpha", 0.2)))
