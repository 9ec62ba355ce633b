"""The ``tf.Variable`` of an imported weight: named after its initializer, filled without extra copies.

A variable's name reaches TensorFlow's runtime as the ``debug_name`` attribute of its
``VarHandleOp``, and the eager runtime caches one op kernel per distinct set of attributes, with
no eviction: ``tf.Variable(value, name=key)`` with a new name each time instantiates a kernel per
variable (0.6 ms and ~36 KB of memory each, kept for the life of the process: 10,000 weights
took 6 s and 360 MB). The variables made here share one debug name, so the kernel is cached
once, and carry their initializer's name as their Python-side name (``var.name``, which
SavedModel, checkpoints, Keras and the exporter read).
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import onnx_ir as ir
import tensorflow as tf

from onnxport.filedata import read_row_blocks, readable

#: weights at least this large that the model file holds as they are fill their variable from the
#: file block by block (``tf.Variable(array)`` holds up to three copies of the array at once)
_BLOCK_FILL_BYTES = 32 << 20

#: the one runtime (debug) name of the variables made here
_RUNTIME_NAME = "onnx_weight"


def var_name(key: str) -> str:
    """A TF variable / module name from an ONNX name (names come from the file: sanitised)."""
    return re.sub(r"[^A-Za-z0-9_.\-/]", "_", key) or "weight"


def new_variable(initial_value: Any, *, name: str, trainable: bool, **kwargs: Any) -> tf.Variable:
    """``tf.Variable(initial_value, name=name, trainable=trainable, **kwargs)``, created under the
    shared runtime name and then given ``name`` (see the module docstring)."""
    var = tf.Variable(initial_value, trainable=trainable, name=_RUNTIME_NAME, **kwargs)
    handle = getattr(var, "handle", None)
    if (var.name != _RUNTIME_NAME + ":0" or not isinstance(getattr(var, "_handle_name", None), str)
            or not isinstance(getattr(var, "_unique_id", None), str) or handle is None):
        # not an eager resource variable made at the top name scope (a distribution strategy,
        # an outer name scope, another TF version): the plain constructor, one kernel per name
        return tf.Variable(var.read_value(), trainable=trainable, name=name, **kwargs)
    var._handle_name = name + ":0"
    var._unique_id = name + var._unique_id[len(_RUNTIME_NAME):]  # keeps TF's uid suffix: unique
    handle._name = var._handle_name
    handle._unique_id = var._unique_id
    return var


def weight_variable(arrays: dict[str, np.ndarray], key: str, value: ir.Value, *, trainable: bool) -> tf.Variable:
    """The variable of weight ``key``, taking its host array out of ``arrays`` (dropped here)."""
    arr = arrays.pop(key)
    tensor = value.const_value
    if not (arr.nbytes >= _BLOCK_FILL_BYTES and arr.ndim >= 1 and readable(tensor)
            and arr.dtype == np.dtype(tensor.dtype.numpy()) and arr.shape == tuple(tensor.shape.numpy())):
        return new_variable(arr, trainable=trainable, name=var_name(key))
    shape, dtype = arr.shape, tf.as_dtype(arr.dtype)
    del arr  # the file holds the same bytes: the variable is filled from it, one block at a time
    var = new_variable(lambda: tf.zeros(shape, dtype), dtype=dtype, shape=shape, trainable=trainable,
                       name=var_name(key))
    for first, rows in read_row_blocks(tensor):
        tf.raw_ops.ResourceStridedSliceAssign(ref=var.handle, begin=[first], end=[first + len(rows)],
                                              strides=[1], value=rows)
    return var
