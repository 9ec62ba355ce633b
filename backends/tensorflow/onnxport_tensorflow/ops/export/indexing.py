"""StridedSlice, Slice, GatherV2 -> Slice, Unsqueeze, Squeeze, Gather.

StridedSlice's masks (begin/end, ellipsis, new axis, shrink axis) are resolved at trace time:
the begin/end/strides must be trace-time constants (what Python slicing produces)."""

from __future__ import annotations

import numpy as np
import tensorflow as tf

from onnxport import Sample, exporter

from ._samples import fn, ints, rand

_BIG = np.iinfo(np.int64).max


def _bits(mask: int, n: int) -> list[bool]:
    return [bool(mask >> i & 1) for i in range(n)]


@exporter(
    "StridedSlice",
    samples=[
        Sample(fn(lambda x: x[:, 1:3]), (rand(2, 4, 5),), emits=("Slice",), name="range"),
        Sample(fn(lambda x: x[..., ::-2]), (rand(2, 4, 5),), emits=("Slice",), name="ellipsis_reverse"),
        Sample(fn(lambda x: x[:, 1]), (rand(2, 4, 5),), emits=("Squeeze",), name="shrink"),
        Sample(fn(lambda x: x[:, tf.newaxis, -1:]), (rand(2, 4, 5),), emits=("Unsqueeze",), name="new_axis"),
    ],
)
def strided_slice(g, x, begin_t, end_t, strides_t):
    begin, end, strides = g.static_ints(1), g.static_ints(2), g.static_ints(3)
    n = len(begin)
    bm, em = _bits(g.attr("begin_mask", 0), n), _bits(g.attr("end_mask", 0), n)
    ell, new, shrink = (_bits(g.attr(k, 0), n) for k in ("ellipsis_mask", "new_axis_mask", "shrink_axis_mask"))
    rank = g.rank(x)
    specs_dims = sum(1 for i in range(n) if not new[i] and not ell[i])
    axes, starts, ends, steps, squeeze, unsqueeze = [], [], [], [], [], []
    dim = 0  # input dim
    out = 0  # output dim before squeezing
    for i in range(n):
        if ell[i]:
            span = rank - specs_dims
            dim += span
            out += span
            continue
        if new[i]:
            unsqueeze.append(out)
            out += 1
            continue
        s = strides[i]
        if shrink[i]:
            b = begin[i]
            axes.append(dim)
            starts.append(b)
            ends.append(b + 1 if b != -1 else _BIG)
            steps.append(1)
            squeeze.append(out)
        else:
            b = (0 if s > 0 else -1) if bm[i] else begin[i]
            e = (_BIG if s > 0 else -_BIG) if em[i] else end[i]
            if not (bm[i] and em[i] and s == 1):
                axes.append(dim)
                starts.append(b)
                ends.append(e)
                steps.append(s)
        dim += 1
        out += 1
    y = x
    if axes:
        y = g.op("Slice", y, g.ints(starts), g.ints(ends), g.ints(axes), g.ints(steps))
    # unsqueeze positions count dims of the result before squeezing the shrunk ones
    if unsqueeze:
        keep = [d for d in range(out) if d not in unsqueeze]
        y = g.op("Unsqueeze", y, g.ints(unsqueeze))
        del keep
    if squeeze:
        y = g.op("Squeeze", y, g.ints(squeeze))
    if y is x:
        y = g.op("Identity", x)
    return y


@exporter(
    "Slice",
    samples=[Sample(fn(lambda x: tf.slice(x, [0, 1, 0], [-1, 2, 3])), (rand(2, 4, 5),), emits=("Slice",))],
)
def slice_(g, x, begin_t, size_t):
    begin, size = g.static_ints(1), g.static_ints(2)
    ends = [_BIG if s == -1 else b + s for b, s in zip(begin, size)]
    return g.op("Slice", x, g.ints(begin), g.ints(ends), g.ints(list(range(len(begin)))))


@exporter(
    "GatherV2",
    samples=[Sample(fn(lambda x, i: tf.gather(x, i, axis=1)), (rand(2, 5, 3), ints(2, 4)), emits=("Gather",),
                    name="axis1"),
             Sample(fn(lambda t, i: tf.gather(t, i)), (rand(6, 4), ints(3, 2)), emits=("Gather",), name="embedding")],
)
def gather(g, params, indices, axis_t):
    if g.attr("batch_dims", 0):
        raise g.error("GatherV2 with batch_dims is not supported")
    axis = g.static_ints(2)[0] % g.rank(params)
    return g.op("Gather", params, indices, axis=axis)
