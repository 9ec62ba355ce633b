"""The call-time size budget (:mod:`onnxport.ir.safety`) for sizes only the run knows: a graph-side
check, run before the op that allocates, raising an error that names the node."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import tensorflow as tf

from onnxport.ir.safety import budget_elements


@contextlib.contextmanager
def within_budget(ctx: Any, count: Any) -> Iterator[None]:
    """Ops built inside run after a check that ``count`` (a scalar tensor: the elements the node
    will create) is within the budget; over it, the run fails naming ``ctx``'s node (the model's
    call turns TensorFlow's error into a :class:`~onnxport.errors.ConversionError`)."""
    limit = budget_elements()
    check = tf.debugging.assert_less_equal(
        tf.cast(count, tf.float64), tf.constant(float(limit), tf.float64),
        message=f"node {ctx.label} would create a tensor of more elements than the {limit} that fit in "
                "memory (ONNXPORT_MAX_ELEMENTS)")
    with tf.control_dependencies([check] if check is not None else []):
        yield


def product(shape: Any) -> Any:
    """The element count of a shape given as a 1-D tensor, in float64 (no int64 overflow)."""
    return tf.reduce_prod(tf.abs(tf.cast(shape, tf.float64)))
