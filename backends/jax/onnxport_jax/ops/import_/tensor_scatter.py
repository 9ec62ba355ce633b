"""TensorScatter (opset 24): write an update into a KV cache along the sequence axis."""

from __future__ import annotations

import jax.numpy as jnp

from onnxport import importer


@importer("TensorScatter", since=24)
def tensor_scatter(ctx, past_cache, update, write_indices=None, *, mode, axis):
    """Per batch row, ``update`` lands at ``write_indices[b] + t`` (mod the cache length if circular)."""
    if mode not in ("linear", "circular"):
        raise ctx.error(f"unknown mode {mode!r} (one of 'linear', 'circular')")
    rank = past_cache.ndim
    axis = axis % rank
    if axis == 0:
        raise ctx.error("axis cannot be the batch dimension 0")
    batch, max_len, seq = past_cache.shape[0], past_cache.shape[axis], update.shape[axis]
    start = jnp.zeros((batch,), jnp.int32) if write_indices is None else jnp.reshape(write_indices, (batch,))
    pos = start[:, None] + jnp.arange(seq)[None, :]  # [B, seq]
    if mode == "circular":
        pos = pos % max_len
    # index tuple: batch, the dims between batch and axis (all), then the target positions
    idx = [jnp.arange(batch).reshape((batch,) + (1,) * axis)]
    for d in range(1, axis):
        shape = [1] * (axis + 1)
        shape[d] = past_cache.shape[d]
        idx.append(jnp.arange(past_cache.shape[d]).reshape(shape))
    idx.append(pos.reshape((batch,) + (1,) * (axis - 1) + (seq,)))
    return jnp.asarray(past_cache).at[tuple(idx)].set(jnp.asarray(update, past_cache.dtype), mode="drop")
