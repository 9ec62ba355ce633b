"""Sequence ops on Python lists of arrays: construct, empty, at, insert, erase, length,
SplitToSequence, ConcatFromSequence and SequenceMap. Positions must be known at trace time
(a sequence is a Python list of tensors inside the traced graph)."""

from __future__ import annotations

import numpy as np
import tensorflow as tf

from onnxport import ImportCase, importer

from ._static import concrete, ints, rank, tensor


def _position(ctx, i, pos, n, insert=False):
    p = int(concrete(ctx, i, pos, "position").reshape(-1)[0])
    hi = n if insert else n - 1
    if not -n <= p <= hi:
        raise ctx.error(f"position {p} is out of range for a sequence of length {n}")
    return p + n if p < 0 else p


@importer("SequenceConstruct", since=11)
def sequence_construct(ctx, *xs):
    return list(xs)


@importer("SequenceEmpty", since=11)
def sequence_empty(ctx, *, dtype):
    return []


@importer("SequenceAt", since=11)
def sequence_at(ctx, seq, position):
    return seq[_position(ctx, 1, position, len(seq))]


@importer("SequenceInsert", since=11)
def sequence_insert(ctx, seq, tensor, position=None):
    out = list(seq)
    if position is None:
        out.append(tensor)
    else:
        out.insert(_position(ctx, 2, position, len(seq), insert=True), tensor)
    return out


# no official node case uses SequenceErase or ConcatFromSequence: declared cases, onnxruntime decides
_SEQ = [np.arange(6, dtype=np.float32).reshape(2, 3) + 10 * k for k in range(3)]


@importer("SequenceErase", since=11, cases=[
    ImportCase((_SEQ,), name="last"),
    ImportCase((_SEQ, np.array(0, np.int64)), name="first"),
    ImportCase((_SEQ, np.array(-2, np.int32)), name="negative"),
])
def sequence_erase(ctx, seq, position=None):
    out = list(seq)
    if not out:
        raise ctx.error("cannot erase from an empty sequence")
    del out[-1 if position is None else _position(ctx, 1, position, len(seq))]
    return out


@importer("SequenceLength", since=11)
def sequence_length(ctx, seq):
    return np.array(len(seq), np.int64)


@importer("SplitToSequence", since=24)
def split_to_sequence(ctx, x, split=None, *, axis, keepdims):
    """Pieces along ``axis``: by ``split`` (a scalar = piece size, or sizes), else one per index."""
    x = tensor(x)
    axis %= rank(x)
    dim = int(x.shape[axis])
    if split is None:
        return [tf.gather(x, i, axis=axis) if not keepdims else tf.gather(x, np.arange(i, i + 1), axis=axis)
                for i in range(dim)]
    sv = concrete(ctx, 1, split, "split")
    if sv.ndim == 0:
        size = int(sv)
        sizes = [size] * (dim // size) + ([dim % size] if dim % size else [])
    else:
        sizes = ints(ctx, 1, split)
    out, start = [], 0
    for s in sizes:
        out.append(tf.gather(x, np.arange(start, start + s), axis=axis))
        start += s
    return out



@importer("ConcatFromSequence", since=11, cases=[
    ImportCase((_SEQ,), {"axis": 1}, name="concat"),
    ImportCase((_SEQ,), {"axis": -1, "new_axis": 1}, name="stack_last"),
    ImportCase((_SEQ[:1],), {"axis": 0, "new_axis": 1}, name="stack_one"),
])
def concat_from_sequence(ctx, seq, *, axis, new_axis):
    if not seq:
        raise ctx.error("cannot concatenate an empty sequence")
    seq = [tensor(s) for s in seq]
    if new_axis:
        return tf.stack(seq, axis=axis % (rank(seq[0]) + 1))
    return tf.concat(seq, axis=axis % rank(seq[0]))


@importer("SequenceMap", since=17)
def sequence_map(ctx, seq, *extra, body):
    """Applies ``body`` to each element (and the matching element of sequence extras)."""
    n = len(seq)
    for e in extra:
        if isinstance(e, list) and len(e) != n:
            raise ctx.error(f"sequence inputs differ in length ({n} and {len(e)})")
    outs: list[list] = [[] for _ in range(body.num_outputs)]
    for i in range(n):
        args = [seq[i]] + [e[i] if isinstance(e, list) else e for e in extra]
        for k, o in enumerate(body(*args)):
            outs[k].append(o)
    return outs[0] if ctx.num_outputs == 1 else tuple(outs)


