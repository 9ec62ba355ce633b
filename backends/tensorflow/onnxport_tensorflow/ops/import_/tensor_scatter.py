"""TensorScatter (opset 24): write an update into a KV cache along the sequence axis."""

from __future__ import annotations

import tensorflow as tf

from onnxport import importer

from ._static import rank, tensor


@importer("TensorScatter", since=24)
def tensor_scatter(ctx, past_cache, update, write_indices=None, *, mode, axis):
    """Per batch row, ``update`` lands at ``write_indices[b] + t`` (mod the cache length if circular)."""
    if mode not in ("linear", "circular"):
        raise ctx.error(f"unknown mode {mode!r} (one of 'linear', 'circular')")
    cache, update = tensor(past_cache), tensor(update)
    r = rank(cache)
    axis %= r
    if axis == 0:
        raise ctx.error("axis cannot be the batch dimension 0")
    # move the sequence axis next to the batch: [B, L, ...rest]
    perm = [0, axis] + [i for i in range(1, r) if i != axis]
    inv = [perm.index(i) for i in range(r)]
    c, u = tf.transpose(cache, perm), tf.cast(tf.transpose(update, perm), cache.dtype)
    batch, max_len, seq = tf.shape(c)[0], tf.shape(c)[1], tf.shape(u)[1]
    start = tf.zeros([batch], tf.int32) if write_indices is None else tf.reshape(tf.cast(write_indices, tf.int32), [-1])
    pos = start[:, None] + tf.range(seq)[None, :]  # [B, seq]
    if mode == "circular":
        pos = pos % max_len
    rows = tf.broadcast_to(tf.range(batch)[:, None], tf.shape(pos))
    idx = tf.stack([rows, pos], axis=-1)  # [B, seq, 2]
    keep = pos < max_len  # linear writes past the end are dropped
    out = tf.tensor_scatter_nd_update(c, tf.boolean_mask(idx, keep), tf.boolean_mask(u, keep))
    return tf.transpose(out, inv)
