"""TfIdfVectorizer: n-gram (with skips) counts over integer or string tokens.

Every (n, skip) pair compares a static window of the input with the pool's n-grams at once.
String tokens are first mapped to their position in ``pool_strings`` (unknown tokens never match)
and then counted the same way.
"""

from __future__ import annotations

import numpy as np
import tensorflow as tf

from onnxport import importer
from onnxport.opmath.tfidf import string_pool, tfidf_plan

from ._static import rank, tensor


def _plan(ctx, row_length, pool, **attrs):
    with ctx.raising():
        return tfidf_plan(row_length, pool=pool, **attrs)


@importer("TfIdfVectorizer", since=9)
def tfidf_vectorizer(ctx, x, *, max_gram_length, max_skip_count, min_gram_length, mode, ngram_counts,
                     ngram_indexes, pool_int64s, pool_strings, weights):
    """[C] -> [size] or [N, C] -> [N, size] float32 TF / IDF / TF-IDF scores (size = max index + 1)."""
    x = tensor(x)
    r = rank(x)
    if r not in (1, 2):
        raise ctx.error(f"the input must be [C] or [N, C], got rank {r}")
    if pool_strings:
        vocab, pool = string_pool(pool_strings)
        words = tf.constant(list(vocab), tf.string)
        hit = tf.equal(x[..., None], words)
        x = tf.where(tf.reduce_any(hit, -1), tf.argmax(tf.cast(hit, tf.int32), -1), tf.constant(-1, tf.int64))
    else:
        pool = np.asarray(pool_int64s if pool_int64s is not None else [], np.int64)
    rows = tf.cast(tf.reshape(x, [1, -1]) if r == 1 else x, tf.int64)
    plan = _plan(ctx, int(rows.shape[1]), pool, max_gram_length=max_gram_length, max_skip_count=max_skip_count,
                 min_gram_length=min_gram_length, mode=mode, ngram_counts=ngram_counts,
                 ngram_indexes=ngram_indexes, weights=weights)
    counts = tf.zeros(tf.stack([tf.shape(rows)[0], plan.size]), tf.float32)
    for ps in plan.passes:
        seen = tf.gather(rows, ps.window, axis=1)  # [R, P, n]
        hits = tf.reduce_all(seen[:, :, None, :] == ps.grams[None, None], axis=-1)  # [R, P, K]
        found = tf.reduce_sum(tf.cast(hits, tf.float32), axis=1)  # [R, K]
        onehot = tf.constant(np.eye(plan.size, dtype=np.float32)[ps.target])  # [K, size]
        counts = counts + found @ onehot
    scale = plan.scale
    if mode == "TF":
        out = counts
    elif mode == "IDF":
        out = tf.cast(counts > 0, tf.float32) * scale
    else:
        out = counts * scale
    return out[0] if r == 1 else out
