"""ai.onnx.ml: LabelEncoder, ArrayFeatureExtractor and Binarizer (string tensors included)."""

from __future__ import annotations

import numpy as np
import tensorflow as tf

from onnxport import importer

from ._static import rank, tensor

_ML = "ai.onnx.ml"


def _plain(v):
    """A key or value as a hashable Python scalar (bytes decoded)."""
    return v.decode() if isinstance(v, bytes) else (v.item() if isinstance(v, np.generic) else v)


# -- LabelEncoder -------------------------------------------------------------------------------
def _label_table(ctx, attrs):
    """(keys list, values list, value numpy dtype, default) from the one keys_*/values_* set."""
    keys = [k for k in (attrs["keys_tensor"], attrs["keys_int64s"], attrs["keys_floats"], attrs["keys_strings"])
            if k is not None and len(k)]
    vals = [("tensor", attrs["values_tensor"]), ("int64", attrs["values_int64s"]),
            ("float", attrs["values_floats"]), ("string", attrs["values_strings"])]
    vals = [(kind, v) for kind, v in vals if v is not None and len(v)]
    if len(keys) != 1 or len(vals) != 1:
        raise ctx.error("LabelEncoder needs exactly one keys_* and one values_* attribute")
    kind, values = vals[0]
    keys = [_plain(k) for k in np.asarray(keys[0]).reshape(-1).tolist()]
    values = [_plain(v) for v in np.asarray(values).reshape(-1).tolist()]
    if len(keys) != len(values):
        raise ctx.error(f"LabelEncoder has {len(keys)} keys but {len(values)} values")
    if kind == "tensor":
        vdtype = np.asarray(attrs["values_tensor"]).dtype
        dflt = attrs["default_tensor"]
        if dflt is not None:
            default = _plain(np.asarray(dflt).reshape(-1)[0])
        else:
            default = "_Unused" if vdtype.kind in "OSU" else (-0.0 if vdtype.kind == "f" else -1)
        if vdtype.kind in "SU":
            vdtype = np.dtype(object)
    elif kind == "int64":
        vdtype, default = np.dtype(np.int64), attrs["default_int64"]
    elif kind == "float":
        vdtype, default = np.dtype(np.float32), attrs["default_float"]
    else:
        vdtype, default = np.dtype(object), attrs["default_string"]
    return keys, values, vdtype, default



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
