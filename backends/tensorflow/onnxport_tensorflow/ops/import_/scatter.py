"""ScatterElements and ScatterND (reductions none/add/mul/max/min); negative indices wrap.

Both become one ``tf.tensor_scatter_nd_*`` over full index tuples.
"""

from __future__ import annotations

import tensorflow as tf

from onnxport import importer

from ._static import rank, tensor

_OPS = {
    "none": tf.tensor_scatter_nd_update,
    "add": tf.tensor_scatter_nd_add,
    "max": tf.tensor_scatter_nd_max,
    "min": tf.tensor_scatter_nd_min,
}


def _scatter(ctx, data, index, updates, reduction):
    if reduction == "mul":
        # a product of updates per target: multiply in log-free form by scattering one at a time
        out = data
        n = tf.shape(index)[0]
        out = tf.while_loop(lambda i, o: i < n,
                            lambda i, o: (i + 1, tf.tensor_scatter_nd_update(
                                o, index[i:i + 1], tf.gather_nd(o, index[i:i + 1]) * updates[i:i + 1])),
                            (tf.constant(0), out))[1]
        return out
    if reduction not in _OPS:
        raise ctx.error(f"unknown reduction {reduction!r}")
    return _OPS[reduction](data, index, updates)


@importer("ScatterElements", since=18)
def scatter_elements(ctx, data, indices, updates, *, axis, reduction):
    data, indices, updates = tensor(data), tf.cast(tensor(indices), tf.int64), tensor(updates)
    r = rank(data)
    axis %= r
    dim = tf.shape(data, out_type=tf.int64)[axis]
    indices = tf.where(indices < 0, indices + dim, indices)
    grids = tf.meshgrid(*[tf.range(s, dtype=tf.int64) for s in tf.unstack(tf.shape(indices, out_type=tf.int64))],
                        indexing="ij") if r else []
    grids[axis] = indices
    index = tf.reshape(tf.stack(grids, axis=-1), [-1, r])
    return _scatter(ctx, data, index, tf.reshape(updates, [-1]), reduction)


@importer("ScatterND", since=18)
def scatter_nd(ctx, data, indices, updates, *, reduction):
    data, indices, updates = tensor(data), tf.cast(tensor(indices), tf.int64), tensor(updates)
    k = indices.shape[-1]
    sizes = tf.shape(data, out_type=tf.int64)[:k]
    indices = tf.where(indices < 0, indices + sizes, indices)
    idx = tf.reshape(indices, [-1, k])
    upd = tf.reshape(updates, tf.concat([[-1], tf.shape(updates)[rank(indices) - 1:]], 0))
    return _scatter(ctx, data, idx, upd, reduction)
