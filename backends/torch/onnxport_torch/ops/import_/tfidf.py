"""TfIdfVectorizer over integer tokens (string pools have no torch tensor type)."""

from __future__ import annotations

import torch

from onnxport import importer


def _pool(ngram_counts, pool, max_n: int) -> dict[tuple[int, ...], int]:
    """n-gram tuple -> position in the pool (ngram_counts[i] starts the (i+1)-grams)."""
    table: dict[tuple[int, ...], int] = {}
    starts = list(ngram_counts) + [len(pool)]
    pos = 0
    for n in range(1, len(ngram_counts) + 1):
        begin, end = starts[n - 1], starts[n]
        for k in range(begin, end, n):
            table[tuple(pool[k:k + n])] = pos
            pos += 1
    return table


@importer("TfIdfVectorizer", since=9)
def tfidf_vectorizer(ctx, x, *, max_gram_length, max_skip_count, min_gram_length, mode, ngram_counts,
                     ngram_indexes, pool_int64s, pool_strings, weights):
    if pool_strings:
        raise ctx.error("TfIdfVectorizer with pool_strings: torch has no string tensors")
    table = _pool(list(ngram_counts), [int(v) for v in pool_int64s], int(max_gram_length))
    size = max(ngram_indexes) + 1 if ngram_indexes else 0
    rows = x.reshape(1, -1) if x.dim() == 1 else x
    counts = torch.zeros((rows.shape[0], size), dtype=torch.float32)
    for r, row in enumerate(rows.tolist()):
        for n in range(max(int(min_gram_length), 1), int(max_gram_length) + 1):
            skips = range(int(max_skip_count) + 1) if n > 1 else range(1)
            for skip in skips:
                step = skip + 1
                for i in range(len(row) - (n - 1) * step):
                    key = tuple(row[i + j * step] for j in range(n))
                    pos = table.get(key)
                    if pos is not None:
                        counts[r, ngram_indexes[pos]] += 1
    w = torch.tensor(list(weights) if weights else [1.0] * len(table), dtype=torch.float32)
    scale = torch.ones(size, dtype=torch.float32)
    for pos, idx in enumerate(ngram_indexes):
        if pos < len(w):
            scale[idx] = w[pos]
    if mode == "TF":
        out = counts
    elif mode == "IDF":
        out = (counts > 0).to(torch.float32) * scale
    elif mode == "TFIDF":
        out = counts * scale
    else:
        raise ctx.error(f"unknown TfIdfVectorizer mode {mode!r}")
    out = out.to(x.device)
    return out[0] if x.dim() == 1 else out
