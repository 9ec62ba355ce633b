"""Constant and ConstantOfShape: values known when the model is imported."""

from __future__ import annotations

import numpy as np
import tensorflow as tf

from onnxport import importer

from ._static import dims


@importer("Constant", since=25)
def constant(ctx, *, sparse_value, value, value_float, value_floats, value_int, value_ints,
             value_string, value_strings):
    if value is not None:
        return np.asarray(value)
    if sparse_value is not None:
        raise ctx.error("sparse tensor constants are not supported by the TensorFlow backend")
    if value_float is not None:
        return np.asarray(value_float, dtype=np.float32)
    if value_floats is not None:
        return np.asarray(value_floats, dtype=np.float32)
    if value_int is not None:
        return np.asarray(value_int, dtype=np.int64)
    if value_ints is not None:
        return np.asarray(value_ints, dtype=np.int64)
    if value_string is not None:
        return np.asarray(value_string, dtype=object)
    if value_strings is not None:
        return np.asarray(value_strings, dtype=object)
    raise ctx.error("Constant has no value attribute")


@importer("ConstantOfShape", since=25)
def constant_of_shape(ctx, shape, *, value):
    fill = np.asarray(value).reshape(-1) if value is not None else np.zeros(1, np.float32)
    target = dims(ctx, 0, shape)
    if isinstance(target, list):
        return np.full(target, fill[0], dtype=fill.dtype)
    return tf.fill(target, tf.constant(fill[0], tf.as_dtype(fill.dtype)))  # a runtime shape
