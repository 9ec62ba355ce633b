"""Helpers for static (numpy) versus traced values, on top of ``onnxport_tensorflow.context``.

Shape-like inputs are read with ``ints`` / ``ctx.concrete`` where TensorFlow needs Python values
(axes, split counts); where a TensorFlow op takes a tensor (a Reshape target, Tile repeats, a
Slice range) primitives pass the runtime tensor instead.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import tensorflow as tf

from ...context import ints, is_static

__all__ = ["concrete", "dims", "ints", "is_static", "np_dtype", "rank", "shape_of", "tf_dtype", "tensor"]


def concrete(ctx, i: int, x: Any, what: str = "") -> np.ndarray | None:
    """Input ``i`` as numpy: its import-time value, else ``x`` when concrete; None if absent."""
    if x is None:
        return None
    c = ctx.const(i)
    if c is not None:
        return np.asarray(c)
    return ctx.concrete(x, f"input {i}{' (' + what + ')' if what else ''}")


def dims(ctx, i: int, x: Any) -> Any:
    """Input ``i`` (a shape, sizes) as a list of ints when known, else an int64 tensor."""
    if x is None:
        return None
    c = ctx.const(i)
    if c is not None:
        return [int(v) for v in np.asarray(c).reshape(-1)]
    if is_static(x):
        return [int(v) for v in np.asarray(x).reshape(-1)]
    try:
        return [int(v) for v in x.numpy().reshape(-1)]
    except Exception:  # noqa: BLE001 - symbolic: the runtime tensor
        return tf.reshape(tf.cast(x, tf.int64), [-1])


def np_dtype(code: int | None, default: Any = None) -> np.dtype:
    """The numpy dtype of an ONNX ``dtype`` attribute, or ``default`` when it is unset."""
    from ...dtypes import to_numpy_dtype

    if code is None or code == 0:
        return np.dtype(default)
    return to_numpy_dtype(code)


def tf_dtype(code: int | None, default: Any = tf.float32) -> tf.DType:
    """The TensorFlow dtype of an ONNX ``dtype`` attribute, or ``default`` when it is unset."""
    from ...dtypes import to_tf_dtype

    if code is None or code == 0:
        return default
    return to_tf_dtype(code)


def tensor(x: Any, dtype: Any = None) -> tf.Tensor:
    """``x`` as a tensor (numpy strings as ``tf.string``)."""
    if isinstance(x, (np.ndarray, np.generic)) and x.dtype.kind in "OSU":
        return tf.constant(np.asarray(x, dtype=object), dtype=tf.string)
    return tf.convert_to_tensor(x, dtype=dtype)


def rank(x: Any) -> int:
    """The rank of ``x`` (static in every value this backend handles)."""
    if isinstance(x, (np.ndarray, np.generic)):
        return np.ndim(x)
    r = x.shape.rank
    if r is None:
        raise ValueError("a value of unknown rank")
    return r


def shape_of(x: Any) -> Any:
    """The shape of ``x``: a numpy int64 vector when every dim is static, else an int64 tensor."""
    if isinstance(x, (np.ndarray, np.generic)):
        return np.asarray(np.shape(x), dtype=np.int64)
    if x.shape.is_fully_defined():
        return np.asarray(x.shape.as_list(), dtype=np.int64)
    return tf.shape(x, out_type=tf.int64)


def dim(x: Any, axis: int) -> Any:
    """One dim of ``x``: an int when static, else a scalar int64 tensor."""
    d = x.shape[axis] if not isinstance(x, np.ndarray) else x.shape[axis]
    if d is not None:
        return int(d)
    return tf.shape(x, out_type=tf.int64)[axis]
