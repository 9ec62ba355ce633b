"""TfIdfVectorizer: n-gram (with skips) counts over integer or string tokens.

Every (n, skip) pair compares a static window of the input with the pool's n-grams at once.
String tokens are first mapped to their position in ``pool_strings`` (unknown tokens never match)
and then counted the same way.
"""

from __future__ import annotations

import numpy as np
import tensorflow as tf

from onnxport import importer

from ._static import rank, tensor


def _pool_groups(ctx, ngram_counts, pool_len: int) -> list[tuple[int, int, int]]:
    """(n, begin, end) pool slices: ngram_counts[n-1] starts the n-grams."""
    starts = [int(v) for v in ngram_counts] + [pool_len]
    groups = []
    for n in range(1, len(ngram_counts) + 1):
        begin, end = starts[n - 1], starts[n]
        if end < begin or (end - begin) % n:
            raise ctx.error(f"the {n}-gram pool slice [{begin}, {end}) does not hold whole {n}-grams")
        groups.append((n, begin, end))
    return groups


@importer("TfIdfVectorizer", since=9)
def tfidf_vectorizer(ctx, x, *, max_gram_length, max_skip_count, min_gram_length, mode, ngram_counts,
                     ngram_indexes, pool_int64s, pool_strings, weights):
    """[C] -> [size] or [N, C] -> [N, size] float32 TF / IDF / TF-IDF scores (size = max index + 1)."""
    if mode not in ("TF", "IDF", "TFIDF"):
        raise ctx.error(f"unknown TfIdfVectorizer mode {mode!r}")
    x = tensor(x)
    r = rank(x)
    if r not in (1, 2):
        raise ctx.error(f"the input must be [C] or [N, C], got rank {r}")
    if pool_strings:
        vocab: dict[str, int] = {}
        pool = np.array([vocab.setdefault(s, len(vocab)) for s in pool_strings], np.int64)
        words = tf.constant(list(vocab), tf.string)
        hit = tf.equal(x[..., None], words)
        x = tf.where(tf.reduce_any(hit, -1), tf.argmax(tf.cast(hit, tf.int32), -1), tf.constant(-1, tf.int64))
    else:
        pool = np.asarray(pool_int64s if pool_int64s is not None else [], np.int64)
    indexes = [int(v) for v in ngram_indexes]
    size = max(indexes) + 1 if indexes else 0
    rows = tf.cast(tf.reshape(x, [1, -1]) if r == 1 else x, tf.int64)
    counts = tf.zeros(tf.stack([tf.shape(rows)[0], size]), tf.float32)
    pos = 0  # running n-gram number across the pool, indexing ngram_indexes
    for n, begin, end in _pool_groups(ctx, ngram_counts, len(pool)):
        grams = pool[begin:end].reshape(-1, n)  # [K, n]
        target = np.asarray(indexes[pos:pos + len(grams)], np.int64)
        pos += len(grams)
        if not len(grams) or not min_gram_length <= n <= max_gram_length:
            continue
        for skip in range(max_skip_count + 1 if n > 1 else 1):
            step = skip + 1
            starts = int(rows.shape[1]) - (n - 1) * step
            if starts <= 0:
                continue
            window = np.arange(starts)[:, None] + np.arange(n)[None, :] * step  # [P, n]
            seen = tf.gather(rows, window, axis=1)  # [R, P, n]
            hits = tf.reduce_all(seen[:, :, None, :] == grams[None, None], axis=-1)  # [R, P, K]
            found = tf.reduce_sum(tf.cast(hits, tf.float32), axis=1)  # [R, K]
            onehot = tf.constant(np.eye(size, dtype=np.float32)[target])  # [K, size]
            counts = counts + found @ onehot
    scale = np.ones(size, np.float32)
    w = list(weights) if weights else []
    for p, idx in enumerate(indexes):
        if p < len(w):
            scale[idx] = w[p]
    if mode == "TF":
        out = counts
    elif mode == "IDF":
        out = tf.cast(counts > 0, tf.float32) * scale
    else:
        out = counts * scale
    return out[0] if r == 1 else out
