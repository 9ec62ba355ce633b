"""Constant and ConstantOfShape: values known when the model is imported."""

from __future__ import annotations

import numpy as np

from onnxport import importer
from onnxport.opmath.constant import constant_value, fill_value

from ...context import ints


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
    dims = ints(ctx, 0, shape)
    return np.full(dims, fill[0], dtype=fill.dtype)
