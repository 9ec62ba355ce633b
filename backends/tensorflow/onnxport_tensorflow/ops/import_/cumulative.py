"""CumSum and CumProd along one axis, inclusive or exclusive, forward or reverse."""

from __future__ import annotations

import tensorflow as tf

from onnxport import importer

from ...context import ints
from ._static import rank, tensor


@importer("CumSum", since=14)
@importer("CumProd", since=26)
def cumulative(ctx, x, axis, *, exclusive, reverse):
    (a,) = ints(ctx, 1, axis)
    x = tensor(x)
    a = a + rank(x) if a < 0 else a
    fn = tf.math.cumsum if ctx.op_type == "CumSum" else tf.math.cumprod
    return fn(x, axis=a, exclusive=bool(exclusive), reverse=bool(reverse))
