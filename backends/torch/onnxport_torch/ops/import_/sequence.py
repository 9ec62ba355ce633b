"""Sequence ops; an ONNX sequence is a Python list of tensors, never changed in place."""

from __future__ import annotations

from collections.abc import Callable

import torch

from onnxport import importer
from onnxport.opmath import sequence as seqs

from ...context import ints
from .slice_split import norm_axis, split_sizes


def _position(ctx, i: int, pos: torch.Tensor | None) -> int | None:
    if pos is None:
        return None
    (p,) = ints(ctx, i, pos)
    return p


def _seq_call(ctx, fn: Callable, *args):
    """A core sequence operation; a bad position is an error naming the node."""
    with ctx.raising():
        return fn(*args)


@importer("SequenceConstruct", since=11)
def sequence_construct(ctx, *xs: torch.Tensor) -> list[torch.Tensor]:
    return list(xs)


@importer("SequenceEmpty", since=11)
def sequence_empty(ctx, *, dtype: int | None) -> list[torch.Tensor]:
    return []


@importer("SequenceAt", since=11)
def sequence_at(ctx, seq: list[torch.Tensor], position: torch.Tensor) -> torch.Tensor:
    return seq[_seq_call(ctx, seqs.position, _position(ctx, 1, position), len(seq))]


@importer("SequenceInsert", since=11)
def sequence_insert(ctx, seq: list[torch.Tensor], tensor: torch.Tensor,
                    position: torch.Tensor | None = None) -> list[torch.Tensor]:
    return _seq_call(ctx, seqs.insert, seq, tensor, _position(ctx, 2, position))


@importer("SequenceErase", since=11)  # cases: onnxport_testkit.semantic_cases
def sequence_erase(ctx, seq: list[torch.Tensor], position: torch.Tensor | None = None) -> list[torch.Tensor]:
    return _seq_call(ctx, seqs.erase, seq, _position(ctx, 1, position))


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


@importer("ConcatFromSequence", since=11)  # cases: onnxport_testkit.semantic_cases
def concat_from_sequence(ctx, seq: list[torch.Tensor], *, axis: int, new_axis: int) -> torch.Tensor:
    if not seq:
        raise ctx.error("cannot concatenate an empty sequence")
    if new_axis:
        rank = seq[0].dim() + 1
        return torch.stack(seq, dim=norm_axis(ctx, axis, rank))
    return torch.cat(seq, dim=norm_axis(ctx, axis, seq[0].dim()))


@importer("SequenceMap", since=17)
def sequence_map(ctx, seq: list[torch.Tensor], *extra, body: Callable[..., list]) -> list | tuple[list, ...]:
    outs = _seq_call(ctx, seqs.map_sequence, body, seq, extra, ctx.num_outputs)
    return outs[0] if ctx.num_outputs == 1 else tuple(outs)
