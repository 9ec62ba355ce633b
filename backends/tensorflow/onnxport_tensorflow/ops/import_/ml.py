"""ai.onnx.ml: LabelEncoder, ArrayFeatureExtractor and Binarizer (string tensors included)."""

from __future__ import annotations

import numpy as np
import tensorflow as tf

from onnxport import importer
from onnxport.mlops import label_table

from ._static import rank, tensor

_ML = "ai.onnx.ml"


def _label_table(ctx, attrs):
    with ctx.raising():
        return label_table(attrs)


@importer("LabelEncoder", since=4, domain=_ML)
def label_encoder(ctx, x, **attrs):
    """Map each element through keys -> values (the last repeated key wins; NaN keys match NaN):
    one vectorized comparison against the key list."""
    keys, values, vdtype, default = _label_table(ctx, attrs)
    x = tensor(x)
    last: dict = {}
    nan_value = None
    for k, v in zip(keys, values):
        if isinstance(k, float) and k != k:
            nan_value = v
        else:
            last[k] = v
    to_text = vdtype.kind == "O"
    vdt = tf.string if to_text else tf.as_dtype(vdtype)

    def const(vals):
        return tf.constant([str(v) for v in vals] if to_text else np.asarray(vals, vdtype), vdt)

    fill = const([default])[0]
    if last:
        ks = list(last)
        if x.dtype == tf.string:
            kt = tf.constant([str(k) for k in ks], tf.string)
        else:
            kt = tf.constant(np.asarray(ks, x.dtype.as_numpy_dtype), x.dtype)
        hit = tf.equal(x[..., None], kt)
        pos = tf.argmax(tf.cast(hit, tf.int32), axis=-1)
        y = tf.where(tf.reduce_any(hit, axis=-1), tf.gather(const([last[k] for k in ks]), pos), fill)
    else:
        y = tf.fill(tf.shape(x), fill)
    if nan_value is not None and x.dtype.is_floating:
        y = tf.where(tf.math.is_nan(x), const([nan_value])[0], y)
    return y


@importer("ArrayFeatureExtractor", since=1, domain=_ML)
def array_feature_extractor(ctx, x, indices):
    """Select ``indices`` (flattened) along the last axis; a 1-D input gives one row ``[1, k]``."""
    x = tensor(x)
    y = tf.gather(x, tf.reshape(indices, [-1]), axis=-1)
    return tf.reshape(y, [1, -1]) if rank(x) == 1 else y


@importer("Binarizer", since=1, domain=_ML)
def binarizer(ctx, x, *, threshold):
    """1 where ``x > threshold``, else 0, in the input's type."""
    x = tensor(x)
    return tf.where(x > tf.constant(threshold, x.dtype), tf.ones((), x.dtype), tf.zeros((), x.dtype))
