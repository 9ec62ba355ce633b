"""TfIdfVectorizer's framework-free plan: which pool n-grams are compared with which windows
of a token row, where their counts go, and the per-index weights.

A backend compares ``row[:, window]`` with each pass's ``grams``, sums the hits over window
positions and adds them at ``target``; then TF keeps the counts, IDF ``(counts > 0) * scale``
and TFIDF ``counts * scale``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np

MODES = ("TF", "IDF", "TFIDF")


@dataclasses.dataclass(frozen=True)
class NgramPass:
    """One (n, skip) comparison: ``grams`` ``[K, n]`` pool n-grams, ``target`` ``[K]`` output
    indexes, ``window`` ``[P, n]`` token positions read for each of P start positions."""

    grams: np.ndarray
    target: np.ndarray
    window: np.ndarray


@dataclasses.dataclass(frozen=True)
class TfIdfPlan:
    size: int
    passes: list[NgramPass]
    scale: np.ndarray  # float32 [size]


def pool_groups(ngram_counts: Sequence[int], pool_len: int) -> list[tuple[int, int, int]]:
    """``(n, begin, end)`` pool slices: ``ngram_counts[n - 1]`` starts the n-grams.

    Raises ValueError when a slice does not hold whole n-grams."""
    starts = [int(v) for v in ngram_counts] + [pool_len]
    groups = []
    for n in range(1, len(ngram_counts) + 1):
        begin, end = starts[n - 1], starts[n]
        if end < begin or (end - begin) % n:
            raise ValueError(f"the {n}-gram pool slice [{begin}, {end}) does not hold whole {n}-grams")
        groups.append((n, begin, end))
    return groups


def string_pool(pool_strings: Sequence[str]) -> tuple[dict[str, int], np.ndarray]:
    """A string pool as ``(vocabulary: token -> id, the pool as int64 ids)``; tokens not in the
    vocabulary map to -1 and never match."""
    vocab: dict[str, int] = {}
    pool = np.array([vocab.setdefault(s, len(vocab)) for s in pool_strings], np.int64)
    return vocab, pool


def tfidf_plan(row_length: int, *, max_gram_length: int, max_skip_count: int, min_gram_length: int, mode: str,
               ngram_counts: Sequence[int], ngram_indexes: Sequence[int], pool: np.ndarray,
               weights: Sequence[float] | None) -> TfIdfPlan:
    """The comparisons and weights of a TfIdfVectorizer over rows of ``row_length`` tokens.

    Raises ValueError for an unknown mode or a malformed pool.
    """
    if mode not in MODES:
        raise ValueError(f"unknown TfIdfVectorizer mode {mode!r}")
    indexes = [int(v) for v in ngram_indexes]
    size = max(indexes) + 1 if indexes else 0
    passes = []
    pos = 0  # running n-gram number across the pool, indexing ngram_indexes
    for n, begin, end in pool_groups(ngram_counts, len(pool)):
        grams = np.asarray(pool[begin:end], np.int64).reshape(-1, n)  # [K, n]
        target = np.asarray(indexes[pos:pos + len(grams)], np.int64)
        pos += len(grams)
        if not len(grams) or not min_gram_length <= n <= max_gram_length:
            continue
        for skip in range(max_skip_count + 1 if n > 1 else 1):
            step = skip + 1
            starts = row_length - (n - 1) * step
            if starts <= 0:
                continue
            window = np.arange(starts)[:, None] + np.arange(n)[None, :] * step  # [P, n]
            passes.append(NgramPass(grams, target, window))
    scale = np.ones(size, np.float32)
    w = list(weights) if weights else []
    for p, idx in enumerate(indexes):
        if p < len(w):
            scale[idx] = w[p]
    return TfIdfPlan(size, passes, scale)
