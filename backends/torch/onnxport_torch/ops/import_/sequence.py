"""Sequence ops; an ONNX sequence is a Python list of tensors, never changed in place."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch

from onnxport import ImportCase, importer

from ...context import ints
from .slice_split import norm_axis, split_sizes

# no official node case uses SequenceErase or ConcatFromSequence: declared cases, onnxruntime decides
_SEQ = [np.arange(6, dtype=np.float32).reshape(2, 3) + 10 * k for k in range(3)]


def _position(ctx, i: int, pos: torch.Tensor, length: int, *, insert: bool = False) -> int:
    """A sequence position in ``[0, length)`` (``[0, length]`` for inserts); negatives count from the end."""
    (p,) = ints(ctx, i, pos)
    q = p + length if p < 0 else p
    if not 0 <= q < length + int(insert):
        raise ctx.error(f"position {p} is out of range for a sequence of length {length}")
    return q


@importer("SequenceConstruct", since=11)
def sequence_construct(ctx, *xs: torch.Tensor) -> list[torch.Tensor]:
    return list(xs)


@importer("SequenceEmpty", since=11)
def sequence_empty(ctx, *, dtype: int | None) -> list[torch.Tensor]:
    return []


@importer("SequenceAt", since=11)
def sequence_at(ctx, seq: list[torch.Tensor], position: torch.Tensor) -> torch.Tensor:
    return seq[_position(ctx, 1, position, len(seq))]


@importer("SequenceInsert", since=11)
def sequence_insert(ctx, seq: list[torch.Tensor], tensor: torch.Tensor,
                    position: torch.Tensor | None = None) -> list[torch.Tensor]:
    out = list(seq)
    if position is None:
        out.append(tensor)
    else:
        out.insert(_position(ctx, 2, position, len(seq), insert=True), tensor)
    return out


@importer("SequenceErase", since=11, cases=[
    ImportCase((_SEQ,), name="last"),
    ImportCase((_SEQ, np.array(0, np.int64)), name="first"),
    ImportCase((_SEQ, np.array(-2, np.int32)), name="negative"),
])
def sequence_erase(ctx, seq: list[torch.Tensor], position: torch.Tensor | None = None) -> list[torch.Tensor]:
    if not seq:
        raise ctx.error("cannot erase from an empty sequence")
    out = list(seq)
    del out[_position(ctx, 1, position, len(seq)) if position is not None else -1]
    return out


@importer("SequenceLength", since=11)
def sequence_length(ctx, seq: list[torch.Tensor]) -> torch.Tensor:
    return torch.tensor(len(seq), dtype=torch.int64)


@importer("SplitToSequence", since=24)
def split_to_sequence(ctx, x: torch.Tensor, split: torch.Tensor | None = None, *, axis: int,
                      keepdims: int) -> list[torch.Tensor]:
    a = norm_axis(ctx, axis, x.dim())
    n = x.shape[a]
    if split is None:
        parts = list(torch.split(x, 1, dim=a))
        return parts if keepdims else [p.squeeze(a) for p in parts]
    sizes = ints(ctx, 1, split)
    if split.dim() == 0:  # one chunk size; the last chunk may be smaller
        if sizes[0] < 1:
            raise ctx.error(f"split size must be positive, got {sizes[0]}")
        return list(torch.split(x, sizes[0], dim=a))
    return list(torch.split(x, split_sizes(ctx, n, sizes, len(sizes)), dim=a))


@importer("ConcatFromSequence", since=11, cases=[
    ImportCase((_SEQ,), {"axis": 1}, name="concat"),
    ImportCase((_SEQ,), {"axis": -1, "new_axis": 1}, name="stack_last"),
    ImportCase((_SEQ[:1],), {"axis": 0, "new_axis": 1}, name="stack_one"),
])
def concat_from_sequence(ctx, seq: list[torch.Tensor], *, axis: int, new_axis: int) -> torch.Tensor:
    if not seq:
        raise ctx.error("cannot concatenate an empty sequence")
    if new_axis:
        rank = seq[0].dim() + 1
        return torch.stack(seq, dim=norm_axis(ctx, axis, rank))
    return torch.cat(seq, dim=norm_axis(ctx, axis, seq[0].dim()))


@importer("SequenceMap", since=17)
def sequence_map(ctx, seq: list[torch.Tensor], *extra, body: Callable[..., list]) -> list | tuple[list, ...]:
    lengths = {len(s) for s in (seq, *extra) if isinstance(s, list)}
    if len(lengths) > 1:
        raise ctx.error(f"input sequences have different lengths {sorted(lengths)}")
    outs: list[list] = [[] for _ in range(ctx.num_outputs)]
    for i in range(len(seq)):
        args = [v[i] if isinstance(v, list) else v for v in (seq, *extra)]
        for out, value in zip(outs, body(*args)):
            out.append(value)
    return outs[0] if ctx.num_outputs == 1 else tuple(outs)
