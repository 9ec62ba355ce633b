"""Constant and ConstantOfShape: values known when the model is imported."""

from __future__ import annotations

import numpy as np
import tensorflow as tf

from onnxport import importer
from onnxport.opmath.constant import constant_value, fill_value

from ...budget import product, within_budget
from ._static import dims


@importer("Constant", since=25)
def constant(ctx, *, sparse_value, value, value_float, value_floats, value_int, value_ints,
             value_string, value_strings):
    with ctx.raising():
        return constant_value(sparse_value=sparse_value, value=value, value_float=value_float,
                              value_floats=value_floats, value_int=value_int, value_ints=value_ints,
                              value_string=value_string, value_strings=value_strings)


@importer("ConstantOfShape", since=25)
def constant_of_shape(ctx, shape, *, value):
    fill = fill_value(value)
    target = dims(ctx, 0, shape)
    if isinstance(target, list):
        return np.full(target, fill[0], dtype=fill.dtype)
    with within_budget(ctx, product(target)):  # a runtime shape
        return tf.fill(target, tf.constant(fill[0], tf.as_dtype(fill.dtype)))
