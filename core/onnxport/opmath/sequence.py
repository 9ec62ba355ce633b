"""ONNX sequence semantics on Python lists, framework-free: positions, insert/erase, the
chunk sizes of SplitToSequence, and SequenceMap's element-wise application.

A sequence is a Python list of a backend's tensors, never changed in place.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any


def position(p: int, length: int, insert: bool = False) -> int:
    """A sequence position in ``[0, length)`` (``[0, length]`` for inserts); negatives count
    from the end. Raises ValueError when out of range."""
    q = p + length if p < 0 else p
    if not 0 <= q < length + int(insert):
        raise ValueError(f"position {p} is out of range for a sequence of length {length}")
    return q


def insert(seq: Sequence[Any], x: Any, p: int | None = None) -> list[Any]:
    """A new list with ``x`` at position ``p`` (None: appended)."""
    out = list(seq)
    if p is None:
        out.append(x)
    else:
        out.insert(position(p, len(seq), insert=True), x)
    return out


def erase(seq: Sequence[Any], p: int | None = None) -> list[Any]:
    """A new list without the element at ``p`` (None: the last). Raises ValueError when empty."""
    if not seq:
        raise ValueError("cannot erase from an empty sequence")
    out = list(seq)
    del out[-1 if p is None else position(p, len(seq))]
    return out


def chunk_sizes(dim: int, size: int) -> list[int]:
    """SplitToSequence with a scalar ``split``: pieces of ``size``, the last one smaller."""
    if size < 1:
        raise ValueError(f"split size must be positive, got {size}")
    return [size] * (dim // size) + ([dim % size] if dim % size else [])


def map_sequence(body: Callable[..., Sequence[Any]], seq: Sequence[Any], extra: Sequence[Any],
                 num_outputs: int) -> list[list[Any]]:
    """SequenceMap: ``body`` on each element of ``seq`` with the matching element of every
    sequence in ``extra`` (a tensor in ``extra`` goes to every call); one list per output."""
    n = len(seq)
    for e in extra:
        if isinstance(e, list) and len(e) != n:
            raise ValueError(f"sequence inputs differ in length ({n} and {len(e)})")
    outs: list[list[Any]] = [[] for _ in range(num_outputs)]
    for i in range(n):
        args = [seq[i]] + [e[i] if isinstance(e, list) else e for e in extra]
        for k, o in enumerate(body(*args)):
            if k < num_outputs:
                outs[k].append(o)
    return outs
