"""StridedSlice, Slice, ReverseV2, GatherV2 -> Slice, Unsqueeze, Squeeze, Gather.

StridedSlice's masks (begin/end, ellipsis, new axis, shrink axis) are attributes, resolved at
trace time; begin/end/strides known at trace time (what Python slicing produces) become constant
Slice inputs, run-time ones (``x[i:j]`` with tensors, slices in loop bodies) computed ones.
ReverseV2 (``tf.reverse``; a Keras backward RNN traced op by op) is a Slice with step -1 on each
axis it reverses."""

from __future__ import annotations

import numpy as np
import onnx_ir as ir
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
        # begin / end / strides known at run time only
        Sample(fn(lambda x, i: x[:, i:i + 2]), (rand(2, 5, 3), np.int32(2)), emits=("Slice",), name="run_time_range"),
        Sample(fn(lambda x, i: x[..., i, tf.newaxis]), (rand(2, 4, 5), np.int32(-1)), emits=("Squeeze",),
               name="run_time_shrink_last"),
        Sample(fn(lambda x, i: x[1, :i]), (rand(3, 4, 5), np.int32(3)), emits=("Squeeze",), name="run_time_end"),
        Sample(fn(lambda x, s: x[:, ::s]), (rand(2, 7, 3), np.int32(-2)), emits=("Slice",),
               name="run_time_negative_stride"),
        Sample(fn(lambda x, s: x[::s, 1:]), (rand(6, 4), np.int32(2)), emits=("Slice",),
               name="run_time_positive_stride"),
        Sample(fn(lambda x, b, e: tf.strided_slice(x, b, e, begin_mask=2, end_mask=1)),
               (rand(4, 6, 3), np.asarray([1, 0, 1], np.int32), np.asarray([3, 5, 3], np.int32)), emits=("Slice",),
               name="run_time_vectors_masks"),
    ],
)
def strided_slice(g, x, begin_t, end_t, strides_t):
    if any(g.static(i) is None for i in (1, 2, 3)):
        return _dynamic_strided_slice(g, x, begin_t, end_t, strides_t)
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


def _dynamic_strided_slice(g, x, begin_t, end_t, strides_t):
    """The same layout of axes from the masks; the starts/ends/steps picked out of the run-time
    vectors (masked entries: the full range in the stride's direction)."""
    n = int(g.in_shape(1)[0]) if g.in_shape(1) and g.in_shape(1)[0] is not None else None
    if n is None:
        raise g.error("a StridedSlice with begin of unknown length is not supported")
    bm, em = _bits(g.attr("begin_mask", 0), n), _bits(g.attr("end_mask", 0), n)
    ell, new, shrink = (_bits(g.attr(k, 0), n) for k in ("ellipsis_mask", "new_axis_mask", "shrink_axis_mask"))
    rank = g.rank(x)
    specs_dims = sum(1 for i in range(n) if not new[i] and not ell[i])
    i64 = ir.DataType.INT64
    vecs = [g.cast(t, i64) for t in (begin_t, end_t, strides_t)]
    static_strides = g.static(3)

    def pick(k: int, i: int):
        return g.op("Gather", vecs[k], g.ints([i]))

    big, small = g.ints([_BIG]), g.ints([-_BIG])
    axes, starts, ends, steps, squeeze, unsqueeze = [], [], [], [], [], []
    dim = out = 0
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
        axes.append(dim)
        if shrink[i]:
            b = pick(0, i)
            starts.append(b)
            ends.append(g.op("Where", g.op("Equal", b, g.ints([-1])), big, g.op("Add", b, g.ints([1]))))
            steps.append(g.ints([1]))
            squeeze.append(out)
        else:
            step = pick(2, i) if static_strides is None else g.ints([int(np.asarray(static_strides)[i])])
            positive = g.op("Greater", step, g.ints([0]))
            starts.append(g.op("Where", positive, small, big) if bm[i] else pick(0, i))
            ends.append(g.op("Where", positive, big, small) if em[i] else pick(1, i))
            steps.append(step)
        dim += 1
        out += 1
    y = x
    if axes:
        y = g.op("Slice", y, g.op("Concat", *starts, axis=0), g.op("Concat", *ends, axis=0), g.ints(axes),
                 g.op("Concat", *steps, axis=0))
    if unsqueeze:
        y = g.op("Unsqueeze", y, g.ints(unsqueeze))
    if squeeze:
        y = g.op("Squeeze", y, g.ints(squeeze))
    y = y if y is not x else g.op("Identity", x)
    if y.shape is None:  # TF may not know the rank with run-time strides; the masks say it
        y.shape = ir.Shape([None] * (rank + len(unsqueeze) - len(squeeze)))
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
    "ReverseV2",
    samples=[Sample(fn(lambda x: tf.reverse(x, [1])), (rand(2, 4, 3),), emits=("Slice",), name="time"),
             Sample(fn(lambda x: tf.reverse(x, [0, -1])), (rand(3, 4, 5),), emits=("Slice",), name="two_axes")],
)
def reverse(g, x, axis_t):
    rank = g.rank(x)
    axes = sorted({a % rank for a in g.static_ints(1)})
    if not axes:
        return g.op("Identity", x)
    n = len(axes)
    return g.op("Slice", x, g.ints([-1] * n), g.ints([np.iinfo(np.int64).min] * n), g.ints(axes), g.ints([-1] * n))


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
