"""Sequence ops on Python lists of arrays: construct, empty, at, insert, erase, length,
SplitToSequence, ConcatFromSequence and SequenceMap. Positions must be known at trace time."""

from __future__ import annotations

import numpy as np

from onnxport import importer
from onnxport.opmath import sequence as seqs

from ._static import concrete, ints, xp


def _position(ctx, i, pos):
    return None if pos is None else int(concrete(ctx, i, pos, "position").reshape(-1)[0])


def _seq_call(ctx, fn, *args):
    """A core sequence operation; a bad position is an error naming the node."""
    with ctx.raising():
        return fn(*args)


@importer("SequenceConstruct", since=11)
def sequence_construct(ctx, *xs):
    return list(xs)


@importer("SequenceEmpty", since=11)
def sequence_empty(ctx, *, dtype):
    return []


@importer("SequenceAt", since=11)
def sequence_at(ctx, seq, position):
    return seq[_seq_call(ctx, seqs.position, _position(ctx, 1, position), len(seq))]


@importer("SequenceInsert", since=11)
def sequence_insert(ctx, seq, tensor, position=None):
    return _seq_call(ctx, seqs.insert, seq, tensor, _position(ctx, 2, position))


@importer("SequenceErase", since=11)  # cases: onnxport_testkit.semantic_cases
def sequence_erase(ctx, seq, position=None):
    return _seq_call(ctx, seqs.erase, seq, _position(ctx, 1, position))


@importer("SequenceLength", since=11)
def sequence_length(ctx, seq):
    return np.array(len(seq), np.int64)


@importer("SplitToSequence", since=24)
def split_to_sequence(ctx, x, split=None, *, axis, keepdims):
    """Pieces along ``axis``: by ``split`` (a scalar = piece size, or sizes), else one per index."""
    m = xp(x)
    axis %= x.ndim
    dim = int(x.shape[axis])
    if split is None:
        parts = [m.take(x, i, axis=axis) if not keepdims else m.take(x, np.arange(i, i + 1), axis=axis)
                 for i in range(dim)]
        return parts
    sv = concrete(ctx, 1, split, "split")
    if sv.ndim == 0:
        sizes = _seq_call(ctx, seqs.chunk_sizes, dim, int(sv))
    else:
        sizes = ints(ctx, 1, split)
    out, start = [], 0
    for s in sizes:
        out.append(m.take(x, np.arange(start, start + s), axis=axis))
        start += s
    return out



@importer("ConcatFromSequence", since=11)  # cases: onnxport_testkit.semantic_cases
def concat_from_sequence(ctx, seq, *, axis, new_axis):
    if not seq:
        raise ctx.error("cannot concatenate an empty sequence")
    m = xp(*seq)
    if new_axis:
        return m.stack(seq, axis=axis % (seq[0].ndim + 1))
    return m.concatenate(seq, axis=axis % seq[0].ndim)


@importer("SequenceMap", since=17)
def sequence_map(ctx, seq, *extra, body):
    """Applies ``body`` to each element (and the matching element of sequence extras)."""
    outs = _seq_call(ctx, seqs.map_sequence, body, seq, extra, body.num_outputs)
    return outs[0] if ctx.num_outputs == 1 else tuple(outs)


