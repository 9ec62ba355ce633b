"""TfIdfVectorizer: n-gram (with skips) counts over integer tokens, or strings on the host.

Integer tokens may be traced: every (n, skip) pair compares a static window of the input with the
pool's n-grams at once. String tokens exist only as host numpy values; they are first mapped to
their position in ``pool_strings`` (unknown tokens never match) and then counted the same way.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from onnxport import importer
from onnxport.opmath.tfidf import string_pool, tfidf_plan

from ._static import xp


def _plan(ctx, row_length, pool, **attrs):
    with ctx.raising():
        return tfidf_plan(row_length, pool=pool, **attrs)


@importer("TfIdfVectorizer", since=9)
def tfidf_vectorizer(ctx, x, *, max_gram_length, max_skip_count, min_gram_length, mode, ngram_counts,
                     ngram_indexes, pool_int64s, pool_strings, weights):
    """[C] -> [size] or [N, C] -> [N, size] float32 TF / IDF / TF-IDF scores (size = max index + 1)."""
    if x.ndim not in (1, 2):
        raise ctx.error(f"the input must be [C] or [N, C], got rank {x.ndim}")
    if pool_strings:
        host = ctx.concrete(x, "string tokens (strings exist only outside jax.jit)")
        vocab, pool = string_pool(pool_strings)
        tokens = np.array([vocab.get(t.decode() if isinstance(t, bytes) else str(t), -1)
                           for t in host.reshape(-1).tolist()], np.int64).reshape(host.shape)
        x = tokens if ctx.is_static(x) else jnp.asarray(tokens)
    else:
        pool = np.asarray(pool_int64s if pool_int64s is not None else [], np.int64)
    m = xp(x)
    rows = m.reshape(x, (1, -1)) if x.ndim == 1 else x
    rows = rows.astype(np.int64) if m is np else rows
    plan = _plan(ctx, int(rows.shape[1]), pool, max_gram_length=max_gram_length, max_skip_count=max_skip_count,
                 min_gram_length=min_gram_length, mode=mode, ngram_counts=ngram_counts,
                 ngram_indexes=ngram_indexes, weights=weights)
    counts = m.zeros((rows.shape[0], plan.size), np.float32)
    for ps in plan.passes:
        seen = rows[:, ps.window]  # [R, P, n]
        hits = m.all(seen[:, :, None, :] == ps.grams[None, None], axis=-1)  # [R, P, K]
        found = m.sum(hits, axis=1).astype(np.float32)  # [R, K]
        if m is np:
            np.add.at(counts, (slice(None), ps.target), found)
        else:
            counts = counts.at[:, ps.target].add(found)
    scale = plan.scale
    if mode == "TF":
        out = counts
    elif mode == "IDF":
        out = (counts > 0).astype(np.float32) * scale
    else:
        out = counts * scale
    return out[0] if x.ndim == 1 else out
