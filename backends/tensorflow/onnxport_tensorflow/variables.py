"""Imported weights as `tf.Variable`s named after their initializers, made without one runtime kernel each.

A variable's name reaches TensorFlow's runtime as the ``debug_name`` attribute of its
``VarHandleOp``, and the eager runtime caches one op kernel per distinct set of attributes, with
no eviction: ``tf.Variable(value, name=key)`` with a new name each time instantiates a kernel per
variable (0.6 ms and ~36 KB of memory each, kept for the life of the process: 10,000 weights
took 6 s and 360 MB). The variables made here share one debug name, so the kernel is cached
once, and carry their initializer's name as their Python-side name (``var.name``, which
SavedModel, checkpoints, Keras and the exporter read).

At the top level of eager code (no distribution strategy or variable creator scope, no name or
container scope, not inside a ``tf.function`` trace) a variable is built directly: one
``VarHandleOp``, one ``AssignVariableOp`` and a :class:`ResourceVariable` around the handle, the
same ops and the same object state ``tf.Variable`` makes there, without its per-variable Python
machinery (creator stack, name, attribute and init scopes: about three quarters of its time,
measured 0.23 -> 0.06 ms per small variable). Anywhere else ``tf.Variable`` makes it.
"""

from __future__ import annotations

import functools
import weakref
from typing import Any

import numpy as np
import tensorflow as tf
from tensorflow.python.distribute import distribute_lib
from tensorflow.python.eager import context
from tensorflow.python.framework import ops
from tensorflow.python.ops import gen_resource_variable_ops, handle_data_util
from tensorflow.python.ops.resource_variable_ops import BaseResourceVariable, ResourceVariable

#: the one runtime (debug) name of the variables made here
_RUNTIME_NAME = "onnx_weight"
#: dtypes whose variables carry more handle data than a shape and dtype (tf.Variable makes them)
_PLAIN_ONLY = frozenset({tf.variant, tf.resource})


def new_variable(initial_value: Any, *, name: str, trainable: bool, **kwargs: Any) -> tf.Variable:
    """``tf.Variable(initial_value, name=name, trainable=trainable, **kwargs)``, created under the
    shared runtime name (see the module docstring). ``kwargs`` other than ``dtype`` and ``shape``
    go to ``tf.Variable``."""
    if _direct_ok(kwargs):
        var = _direct_variable(initial_value, name, trainable, kwargs.get("dtype"), kwargs.get("shape"))
        if var is not None:
            return var
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


def _direct_ok(kwargs: dict[str, Any]) -> bool:
    """Whether ``tf.Variable`` would make a plain eager ``ResourceVariable`` here, named as given."""
    if not kwargs.keys() <= {"dtype", "shape"} or not context.executing_eagerly():
        return False
    ctx = context.context()
    graph = ops.get_default_graph()
    return (not ctx.scope_name and not graph._variable_creator_stack and not distribute_lib.has_strategy()
            and not graph._container)


def _direct_variable(initial_value: Any, name: str, trainable: bool, dtype: Any, shape: Any) -> tf.Variable | None:
    """The eager variable ``tf.Variable`` makes at the top level, built from its handle; None
    when the value is of a kind left to ``tf.Variable`` (variants, resources)."""
    if callable(initial_value):
        initial_value = initial_value()
    if isinstance(initial_value, np.ndarray) and dtype is None:  # what convert_to_tensor does with it
        ctx = context.context()
        ctx.ensure_initialized()
        value = ops.EagerTensor(initial_value, ctx.device_name, None)
    else:
        value = ops.convert_to_tensor(initial_value, dtype=dtype)
    dtype = value.dtype
    if dtype in _PLAIN_ONLY:
        return None
    if shape is not None:
        if not value.shape.is_compatible_with(shape):
            raise ValueError(f"the initial value's shape ({value.shape}) is not compatible with the "
                             f"explicitly supplied `shape` argument ({shape})")
        var_shape, handle_data = tf.TensorShape(shape), None
    else:
        var_shape, handle_data = _shape_facts(value._shape_tuple(), dtype)
    handle = gen_resource_variable_ops.var_handle_op(
        shape=var_shape, dtype=dtype, shared_name=context.anonymous_name(), debug_name=_RUNTIME_NAME,
        container="")
    if handle_data is None:
        handle._handle_data = handle_data_util.create_handle_data(var_shape, dtype)
    else:  # each handle its own copy, as tf.Variable gives it
        handle._handle_data = type(handle_data)()
        handle._handle_data.CopyFrom(handle_data)
    gen_resource_variable_ops.assign_variable_op(handle, value)
    unique_id = f"{name}_{ops.uid()}"
    var = ResourceVariable.__new__(ResourceVariable)
    BaseResourceVariable.__init__(var, trainable=trainable, shape=var_shape, dtype=dtype, handle=handle,
                                  unique_id=unique_id, handle_name=name, in_graph_mode=False)
    handle._parent_trackable = weakref.ref(var)
    handle._name = name + ":0"
    handle._unique_id = unique_id
    return var


@functools.lru_cache(maxsize=256)
def _shape_facts(dims: tuple[int, ...], dtype: tf.DType) -> tuple[tf.TensorShape, Any]:
    """The ``TensorShape`` and the handle data (shape and dtype, for shape inference where the
    handle is captured) of a variable of these dims and dtype."""
    shape = tf.TensorShape(dims)
    return shape, handle_data_util.create_handle_data(shape, dtype)
