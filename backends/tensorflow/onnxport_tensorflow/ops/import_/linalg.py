"""Einsum and Det."""

from __future__ import annotations

import tensorflow as tf

from onnxport import importer

from ._static import tensor


@importer("Einsum", since=28)
def einsum(ctx, *xs, equation):
    return tf.einsum(equation.replace(" ", ""), *[tensor(x) for x in xs])


@importer("Det", since=22)
def det(ctx, x):
    return tf.linalg.det(x)
