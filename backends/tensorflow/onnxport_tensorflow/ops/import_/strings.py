"""String ops on ``tf.string`` tensors: StringConcat, RegexFullMatch (RE2, as ONNX specifies),
StringSplit (ragged split padded with empty strings) and StringNormalizer."""

from __future__ import annotations

import tensorflow as tf

from onnxport import importer

from ._static import rank, tensor


@importer("StringConcat", since=20)
def string_concat(ctx, x, y):
    x, y = tensor(x), tensor(y)
    shape = tf.broadcast_dynamic_shape(tf.shape(x), tf.shape(y))
    return tf.strings.join([tf.broadcast_to(x, shape), tf.broadcast_to(y, shape)])


@importer("RegexFullMatch", since=20)
def regex_full_match(ctx, x, *, pattern):
    if pattern is None:
        raise ctx.error("RegexFullMatch needs a pattern")
    return tf.strings.regex_full_match(tensor(x), pattern)


@importer("StringSplit", since=20)
def string_split(ctx, x, *, delimiter, maxsplit):
    """Y: the pieces, padded with "" to the longest split ([*X.shape, max pieces]); Z: the counts."""
    x = tensor(x)
    flat = tf.reshape(x, [-1])
    sep = delimiter if delimiter else None  # empty/absent: runs of whitespace, no empty pieces
    parts = tf.strings.split(flat, sep=sep, maxsplit=-1 if maxsplit is None else int(maxsplit))
    counts = parts.row_lengths()
    width = tf.reduce_max(tf.concat([counts, [0]], 0))
    dense = parts.to_tensor(default_value="", shape=tf.stack([tf.size(flat, out_type=tf.int64), width]))
    outer = tf.shape(x, out_type=tf.int64)
    y = tf.reshape(dense, tf.concat([outer, [width]], 0))
    z = tf.reshape(counts, outer)
    return y, z


@importer("StringNormalizer", since=10)
def string_normalizer(ctx, x, *, case_change_action, is_case_sensitive, locale, stopwords):
    """Drop stopwords from a [C] or [1, C] tensor, then change case; all dropped gives [""]."""
    x = tensor(x)
    r = rank(x)
    flat = tf.reshape(x, [-1])
    if stopwords:
        words = tf.constant([str(w) for w in stopwords], tf.string)
        if is_case_sensitive:
            hit = tf.equal(flat[:, None], words[None, :])
        else:
            hit = tf.equal(tf.strings.lower(flat, encoding="utf-8")[:, None],
                           tf.strings.lower(words, encoding="utf-8")[None, :])
        flat = tf.boolean_mask(flat, tf.logical_not(tf.reduce_any(hit, axis=1)))
    if case_change_action == "LOWER":
        flat = tf.strings.lower(flat, encoding="utf-8")
    elif case_change_action == "UPPER":
        flat = tf.strings.upper(flat, encoding="utf-8")
    elif case_change_action not in (None, "NONE"):
        raise ctx.error(f"unknown case_change_action {case_change_action!r}")
    flat = tf.cond(tf.size(flat) > 0, lambda: flat, lambda: tf.constant([""]))
    return flat if r == 1 else tf.reshape(flat, [1, -1])
