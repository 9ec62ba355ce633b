"""CumSum and CumProd along one axis, inclusive or exclusive, forward or reverse."""

from __future__ import annotations

import tensorflow as tf

from onnxport import importer

from ._static import dims, rank, tensor


@importer("CumSum", since=14)
@importer("CumProd", since=26)
def cumulative(ctx, x, axis, *, exclusive, reverse):
    """The axis may be a runtime tensor (TensorFlow's cumsum/cumprod take it as one)."""
    a = dims(ctx, 1, axis)
    x = tensor(x)
    if isinstance(a, list):
        (a,) = a
        a = a + rank(x) if a < 0 else a
    else:
        a = tf.reshape(a, [])  # a negative axis counts from the end in TensorFlow too
    fn = tf.math.cumsum if ctx.op_type == "CumSum" else tf.math.cumprod
    return fn(x, axis=a, exclusive=bool(exclusive), reverse=bool(reverse))
