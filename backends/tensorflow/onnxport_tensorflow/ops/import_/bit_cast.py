"""BitCast (opset 26): reinterpret the bits of a tensor as another type of the same width."""

from __future__ import annotations

import numpy as np
import tensorflow as tf

from onnxport import importer

from ._static import np_dtype, tensor, tf_dtype


@importer("BitCast", since=26)
def bit_cast(ctx, x, *, to):
    """Same shape, same bytes, new dtype ``to``; a width change is refused."""
    target = np_dtype(to)
    if isinstance(x, np.ndarray):
        src = x.dtype
    else:
        src = np.dtype(tensor(x).dtype.as_numpy_dtype) if tensor(x).dtype != tf.string else np.dtype(object)
    if src.kind in "OSU" or target.kind in "OSU":
        raise ctx.error("BitCast to or from strings is undefined")
    if src.itemsize != target.itemsize:
        raise ctx.error(f"BitCast from {src} to {target} changes the bit width")
    if isinstance(x, np.ndarray):
        return np.asarray(x).view(target)
    x = tensor(x)
    if x.dtype == tf.bool:
        x = tf.cast(x, tf.uint8)
        if target == np.uint8:
            return x
    if target == np.bool_:
        return tf.bitcast(x, tf.uint8) != 0
    return tf.bitcast(x, tf_dtype(to))
