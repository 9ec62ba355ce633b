"""Imported weights as `tf.Variable`s named after their initializers, made without one runtime kernel each.

A variable's name reaches TensorFlow's runtime as the ``debug_name`` attribute of its
``VarHandleOp``, and the eager runtime caches one op kernel per distinct set of attributes, with
no eviction: ``tf.Variable(value, name=key)`` with a new name each time instantiates a kernel per
variable (0.6 ms and ~36 KB of memory each, kept for the life of the process: 10,000 weights
took 6 s and 360 MB). The variables made here share one debug name, so the kernel is cached
once, and carry their initializer's name as their Python-side name (``var.name``, which
SavedModel, checkpoints, Keras and the exporter read).
"""

from __future__ import annotations

from typing import Any

import tensorflow as tf
from tensorflow.python.ops.resource_variable_ops import ResourceVariable

#: the one runtime (debug) name of the variables made here
_RUNTIME_NAME = "onnx_weight"


def new_variable(initial_value: Any, *, name: str, trainable: bool, **kwargs: Any) -> tf.Variable:
    """``tf.Variable(initial_value, name=name, trainable=trainable, **kwargs)``, created under the
    shared runtime name and then given ``name`` (see the module docstring)."""
    var = tf.Variable(initial_value, trainable=trainable, name=_RUNTIME_NAME, **kwargs)
    if (type(var) is not ResourceVariable or not tf.executing_eagerly() or var.name != _RUNTIME_NAME + ":0"
            or not isinstance(getattr(var, "_unique_id", None), str)):
        # not a plain eager variable made at the top name scope (a distribution strategy or a
        # variable creator scope, an outer name scope, graph mode): the plain constructor
        return tf.Variable(var.read_value(), trainable=trainable, name=name, **kwargs)
    handle = var.handle
    var._handle_name = name + ":0"
    var._unique_id = name + var._unique_id[len(_RUNTIME_NAME):]  # keeps TF's uid suffix: unique
    handle._name = var._handle_name
    handle._unique_id = var._unique_id
    return var
