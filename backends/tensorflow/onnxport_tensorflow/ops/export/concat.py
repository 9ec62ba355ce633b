"""ConcatV2, Pack, Unpack, Split, SplitV -> Concat, Unsqueeze, Split, Squeeze."""

from __future__ import annotations

import tensorflow as tf

from onnxport import Sample, exporter

from ._samples import fn, rand


@exporter(
    "ConcatV2",
    samples=[Sample(fn(lambda a, b: tf.concat([a, b, a], -1)), (rand(2, 3), rand(2, 2)), emits=("Concat",))],
)
def concat(g, *xs):
    axis = g.static_ints(len(xs) - 1)[0]
    return g.op("Concat", *xs[:-1], axis=axis % g.rank(xs[0]))


@exporter(
    "Pack",
    samples=[Sample(fn(lambda a, b: tf.stack([a, b], axis=1)), (rand(2, 3), rand(2, 3)), emits=("Concat",))],
)
def pack(g, *xs):
    rank = g.rank(xs[0]) + 1
    axis = g.attr("axis", 0) % rank
    parts = [g.op("Unsqueeze", x, g.ints([axis])) for x in xs]
    return parts[0] if len(parts) == 1 else g.op("Concat", *parts, axis=axis)


@exporter(
    "Unpack",
    samples=[Sample(fn(lambda x: tf.unstack(x, axis=1)), (rand(2, 3, 4),), emits=("Split", "Squeeze"))],
)
def unpack(g, x):
    rank = g.rank(x)
    axis = g.attr("axis", 0) % rank
    num = int(g.attr("num"))
    parts = g.op("Split", x, g.ints([1] * num), axis=axis, outputs=num) if num > 1 else (x,)
    return tuple(g.op("Squeeze", p, g.ints([axis])) for p in parts)


def _split(g, x, axis, sizes):
    n = len(sizes)
    if n == 1:
        return (g.op("Identity", x),)
    return g.op("Split", x, g.ints(sizes), axis=axis, outputs=n)


@exporter(
    "Split",
    samples=[Sample(fn(lambda x: tf.split(x, 2, axis=-1)), (rand(2, 3, 4),), emits=("Split",))],
)
def split(g, axis_t, x):
    rank = g.rank(x)
    axis = g.static_ints(0)[0] % rank
    n = int(g.attr("num_split"))
    size = x.shape[axis]
    if not isinstance(size, int):
        return g.op("Split", x, axis=axis, num_outputs=n, outputs=n)
    return _split(g, x, axis, [size // n] * n)


@exporter(
    "SplitV",
    samples=[Sample(fn(lambda x: tf.split(x, [1, -1], axis=1)), (rand(2, 5),), emits=("Split",))],
)
def split_v(g, x, sizes_t, axis_t):
    rank = g.rank(x)
    axis = g.static_ints(2)[0] % rank
    sizes = g.static_ints(1)
    if -1 in sizes:
        total = x.shape[axis]
        if not isinstance(total, int):
            raise g.error("a -1 split size on a dim of unknown size")
        sizes[sizes.index(-1)] = total - sum(s for s in sizes if s != -1)
    return _split(g, x, axis, sizes)
